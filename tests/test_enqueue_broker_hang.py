"""A Redis broker that hangs holds one completion of a process for its timeout, not every
completion: for BROKER_QUIET_SECONDS after an enqueue timed out, the process's enqueues
are counted as failures without trying the broker, logged once, and then one tries again.
A broker that refuses connections fails at once and is tried every time, as before."""

import logging
import time
from collections.abc import Iterator

import pytest
import redis
from prometheus_client import REGISTRY

from config import queue
from config.failure_log import RepeatedFailures
from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.processes import free_port
from tests.redis_databases import redis_db, redis_url
from tests.silent_server import SilentServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# The broker's read timeout here: the first completion waits it out.
SOCKET_TIMEOUT = 0.5
BODY = {"status": "SUCCESS", "answer": "根因：长事务。"}


def enqueue_failures() -> float:
    """The process's diagnosis_enqueue_failures_total as /metrics shows it; read from the
    registry, since a scrape reads the broker too (a connection of its own)."""
    return REGISTRY.get_sample_value("diagnosis_enqueue_failures_total") or 0.0


def use_broker(monkeypatch, url: str) -> None:  # type: ignore[no-untyped-def]
    """The Redis broker at `url`, as Q_REDIS_URL sets it (django-q2 reads its settings
    once, into Conf); tasks queued, not run inline."""
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    monkeypatch.setattr("django_q.conf.Conf.ORM", None)
    monkeypatch.setattr("django_q.conf.Conf.REDIS", url)


@pytest.fixture
def hanging_broker(monkeypatch) -> Iterator[SilentServer]:  # type: ignore[no-untyped-def]
    server = SilentServer()
    use_broker(
        monkeypatch,
        f"redis://127.0.0.1:{server.port}/{redis_db('scale_out')}?socket_timeout={SOCKET_TIMEOUT}",
    )
    # This process has seen no broker time out yet.
    monkeypatch.setattr(queue, "_quiet_until", 0.0)
    monkeypatch.setattr(queue, "_not_tried", RepeatedFailures())
    yield server
    server.close()


@pytest.fixture
def answering_redis() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url("scale_out"))
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


def complete(api, session_id: str) -> int:  # type: ignore[no-untyped-def]
    DiagnosisSessionFactory(session_id=session_id)
    return api.post(f"/api/sessions/{session_id}/complete", BODY, format="json").status_code


def queue_lines(caplog) -> list[logging.LogRecord]:  # type: ignore[no-untyped-def]
    return [r for r in caplog.records if r.name == "config.queue"]


def test_after_the_broker_timed_out_the_next_completions_answer_without_trying_it(
    api, hanging_broker: SilentServer, caplog
) -> None:
    before = enqueue_failures()

    first = complete(api, "h-1")
    tried = len(hanging_broker.accepted)
    later = [complete(api, "h-2"), complete(api, "h-3")]

    assert first == 200
    assert later == [200, 200]
    assert tried == 1
    assert len(hanging_broker.accepted) == tried  # the broker was not tried again
    assert enqueue_failures() == before + 3
    statuses = DiagnosisSession.objects.filter(session_id__startswith="h-").values_list(
        "status", flat=True
    )
    assert list(statuses) == ["SUCCESS"] * 3
    # One line for the window, for the completion that waited.
    (line,) = queue_lines(caplog)
    assert line.levelno == logging.ERROR
    assert line.getMessage().startswith("task not enqueued after its commit: TimeoutError")
    assert line.session_id == "h-1"


def test_once_the_quiet_time_is_over_a_completion_tries_the_broker_again(
    api, hanging_broker: SilentServer, monkeypatch, caplog
) -> None:
    monkeypatch.setattr(queue, "BROKER_QUIET_SECONDS", 0.2)
    complete(api, "w-1")
    tried = len(hanging_broker.accepted)

    time.sleep(0.3)
    complete(api, "w-2")

    assert len(hanging_broker.accepted) > tried
    assert [line.session_id for line in queue_lines(caplog)] == ["w-1", "w-2"]


def test_the_next_line_after_the_quiet_time_says_how_many_tasks_were_not_tried(
    api, hanging_broker: SilentServer, monkeypatch, caplog
) -> None:
    monkeypatch.setattr(queue, "BROKER_QUIET_SECONDS", 1.0)
    complete(api, "n-1")
    complete(api, "n-2")
    complete(api, "n-3")

    time.sleep(1.1)
    complete(api, "n-4")

    first, second = queue_lines(caplog)
    assert "more" not in first.getMessage()
    assert second.session_id == "n-4"
    assert second.getMessage().endswith("(2 more tasks not enqueued since the last line)")


def test_a_broker_that_answers_after_the_quiet_time_takes_the_task_and_says_so(
    api, hanging_broker: SilentServer, answering_redis: redis.Redis, monkeypatch, caplog
) -> None:
    monkeypatch.setattr(queue, "BROKER_QUIET_SECONDS", 1.0)
    complete(api, "r-1")
    use_broker(monkeypatch, redis_url("scale_out"))
    complete(api, "r-2")  # not tried yet, though it answers now
    assert answering_redis.keys("django_q:*") == []

    time.sleep(1.1)
    complete(api, "r-3")

    (queued,) = answering_redis.keys("django_q:*")
    assert answering_redis.llen(queued) == 1
    failed, again = queue_lines(caplog)
    assert failed.session_id == "r-1"
    assert again.levelno == logging.WARNING
    assert again.getMessage() == (
        "tasks enqueued again after the broker timed out "
        "(1 more tasks not enqueued since the last line)"
    )


def test_a_broker_that_refuses_connections_is_tried_at_every_completion(
    api, hanging_broker: SilentServer, monkeypatch, caplog
) -> None:
    use_broker(monkeypatch, f"redis://127.0.0.1:{free_port()}/{redis_db('scale_out')}")
    complete(api, "c-1")
    use_broker(
        monkeypatch,
        f"redis://127.0.0.1:{hanging_broker.port}/{redis_db('scale_out')}"
        f"?socket_timeout={SOCKET_TIMEOUT}",
    )

    complete(api, "c-2")

    assert len(hanging_broker.accepted) >= 1  # no quiet time after a refusal
    assert [line.getMessage().split(": ")[1] for line in queue_lines(caplog)] == [
        "ConnectionError",
        "TimeoutError",
    ]


def test_while_the_broker_is_quiet_a_task_run_inline_still_runs(
    api, hanging_broker: SilentServer, monkeypatch
) -> None:
    complete(api, "s-1")
    monkeypatch.setattr("django_q.conf.Conf.SYNC", True)

    complete(api, "s-2")

    assert DiagnosisSession.objects.get(session_id="s-2").self_evaluation is not None
