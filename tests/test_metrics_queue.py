"""/metrics and the task queue: waiting tasks aged from their enqueue time, tasks workers
hold, and a broker that cannot be read logged once a minute per process."""

import contextlib
import datetime
import logging
from collections.abc import Iterator

import pytest
from django.utils import timezone

from tests.metrics_samples import scrape, value

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_broker_log(monkeypatch):  # type: ignore[no-untyped-def]
    """Each test starts with no broker failure logged in this process."""
    from config import failure_log, metrics_scrape

    monkeypatch.setattr(metrics_scrape, "_broker_failures", failure_log.RepeatedFailures())
    return metrics_scrape


def enqueue_task(monkeypatch, *, minutes_ago: float = 0) -> int:  # type: ignore[no-untyped-def]
    """A task put on the ORM broker (not run inline), as if `async_task` had been called
    `minutes_ago`: its signed package holds that enqueue time. The OrmQ row's id."""
    from django_q.brokers import get_broker
    from django_q.models import OrmQ
    from django_q.signing import SignedPackage
    from django_q.tasks import async_task

    with monkeypatch.context() as queued:
        queued.setattr("django_q.conf.Conf.SYNC", False)
        async_task("evaluation.tasks.worker_heartbeat")
    row = OrmQ.objects.filter(key=get_broker().list_key).latest("id")
    task = SignedPackage.loads(row.payload)
    earlier = datetime.timedelta(minutes=minutes_ago)
    task["started"] -= earlier
    OrmQ.objects.filter(pk=row.pk).update(
        payload=SignedPackage.dumps(task), lock=row.lock - earlier
    )
    return row.pk


def a_worker_takes_the_waiting_tasks() -> None:
    """What a qcluster's pusher does: the ORM broker locks them for Q_RETRY seconds."""
    from django_q.brokers import get_broker

    assert get_broker().dequeue()


def the_worker_dies_and_its_lock_expires(row_id: int) -> None:
    """Q_RETRY seconds later, the task of a worker killed while running it is waiting again."""
    from django_q.models import OrmQ

    OrmQ.objects.filter(pk=row_id).update(lock=timezone.now() - datetime.timedelta(seconds=1))


def test_a_task_held_by_a_worker_counts_in_flight_and_not_waiting(monkeypatch) -> None:
    enqueue_task(monkeypatch, minutes_ago=10)
    a_worker_takes_the_waiting_tasks()
    enqueue_task(monkeypatch)

    samples = scrape()

    assert value(samples, "diagnosis_queue_waiting_tasks") == 1
    assert value(samples, "diagnosis_queue_tasks_in_flight") == 1
    assert value(samples, "diagnosis_queue_oldest_task_age_seconds") < 600  # not the held one


def test_a_task_whose_worker_died_waits_again_with_its_age_from_its_enqueue_time(
    monkeypatch,
) -> None:
    # A task that kills its worker comes back after Q_RETRY: its age is not restarted, so
    # a backlog alert on it can fire.
    lost = enqueue_task(monkeypatch, minutes_ago=10)
    a_worker_takes_the_waiting_tasks()
    enqueue_task(monkeypatch)
    the_worker_dies_and_its_lock_expires(lost)

    samples = scrape()

    assert value(samples, "diagnosis_queue_waiting_tasks") == 2
    assert value(samples, "diagnosis_queue_tasks_in_flight") == 0
    assert value(samples, "diagnosis_queue_oldest_task_age_seconds") >= 600


def test_a_waiting_task_whose_package_cannot_be_read_is_aged_from_its_row() -> None:
    from django_q.brokers import get_broker
    from django_q.models import OrmQ

    OrmQ.objects.create(
        key=get_broker().list_key,
        payload="signed with another SECRET_KEY",
        lock=timezone.now() - datetime.timedelta(minutes=5),
    )

    samples = scrape()

    assert value(samples, "diagnosis_queue_waiting_tasks") == 1
    assert value(samples, "diagnosis_queue_oldest_task_age_seconds") >= 300


@contextlib.contextmanager
def redis_broker_unreachable(monkeypatch) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The Redis broker at an address where nothing listens, until the block ends."""
    with monkeypatch.context() as broker:
        broker.setattr("django_q.conf.Conf.ORM", None)
        broker.setattr("django_q.conf.Conf.REDIS", "redis://127.0.0.1:1/7")
        yield


def broker_lines(caplog) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "config.metrics_scrape" and r.levelno >= logging.WARNING
    ]


def test_an_unreadable_broker_is_logged_once_a_minute_with_the_scrapes_failed_since(
    monkeypatch, caplog, fresh_broker_log
) -> None:
    with caplog.at_level(logging.INFO), redis_broker_unreachable(monkeypatch):
        scrapes = [scrape() for _ in range(4)]
        monkeypatch.setattr(fresh_broker_log, "BROKER_LOG_SECONDS", 0.0)  # a minute later
        scrapes.append(scrape())

    assert [value(samples, "diagnosis_queue_up") for samples in scrapes] == [0] * 5
    assert not [name for name, _labels in scrapes[-1] if name == "diagnosis_queue_tasks_in_flight"]
    first, second = broker_lines(caplog)
    assert first.startswith("metrics: the task queue's broker could not be read: ConnectionError")
    assert second.startswith("metrics: the task queue's broker could not be read: ConnectionError")
    assert second.endswith("(3 more scrapes failed since the last line)")


def test_the_first_scrape_that_reads_the_broker_again_says_so_with_the_failures_not_told(
    monkeypatch, caplog
) -> None:
    with caplog.at_level(logging.INFO):
        with redis_broker_unreachable(monkeypatch):
            down = [value(scrape(), "diagnosis_queue_up") for _ in range(3)]
        up = [value(scrape(), "diagnosis_queue_up") for _ in range(2)]

    assert (down, up) == ([0] * 3, [1] * 2)
    lines = broker_lines(caplog)
    assert lines[0].startswith("metrics: the task queue's broker could not be read: ")
    assert lines[1:] == [
        "metrics: the task queue's broker can be read again "
        "(2 more scrapes failed since the last line)"
    ]
