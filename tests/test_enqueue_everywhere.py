"""Every task the project queues goes through config.queue: a broker that cannot take one
fails nothing, and the failure is logged and counted the same way wherever it happens."""

import logging

import pytest
from django.db import transaction
from django.utils import timezone
from django_q.models import OrmQ

from caselibrary.models import CaseIndexState, CaseLibrary
from caselibrary.services.cases import case_create_manual
from caselibrary.services.index import INDEX_TASK, case_index_requests_deferred
from caselibrary.tasks import case_indexer_task
from tests.factories import FaultCategoryFactory
from tests.metrics_samples import scrape, value

pytestmark = pytest.mark.django_db(transaction=True)

UNREACHABLE_BROKER = "redis://127.0.0.1:1/7"


@pytest.fixture
def categories() -> None:
    FaultCategoryFactory(code="DEPENDENCY")


@pytest.fixture
def broker_unreachable(monkeypatch, settings):  # type: ignore[no-untyped-def]
    """The Redis broker where nothing listens, as Q_REDIS_URL sets it (django-q2 reads its
    settings once, into Conf); tasks queued, not run inline."""
    settings.Q_CLUSTER = {k: v for k, v in settings.Q_CLUSTER.items() if k != "orm"} | {
        "redis": UNREACHABLE_BROKER
    }
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    monkeypatch.setattr("django_q.conf.Conf.ORM", None)
    monkeypatch.setattr("django_q.conf.Conf.REDIS", UNREACHABLE_BROKER)


@pytest.fixture
def queued_for_a_worker(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The ORM broker, no worker: what a write queues stays in OrmQ."""
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)


def a_case(title: str = "Redis maxmemory 触发大量 key 淘汰") -> CaseLibrary:
    return case_create_manual(
        created_by="ops.curator",
        title=title,
        root_cause="maxmemory-policy allkeys-lru，热点 key 被淘汰",
        solution="1. 扩容 2. 调整 maxmemory",
        fault_category="DEPENDENCY",
    )


def failures(caplog) -> list[logging.LogRecord]:  # type: ignore[no-untyped-def]
    return [r for r in caplog.records if r.name == "config.queue"]


def hold_the_lease() -> None:
    CaseIndexState.objects.update_or_create(id=1, defaults={"building_since": timezone.now()})


def test_a_case_written_while_the_broker_refuses_is_kept_and_the_index_request_logged_and_counted(
    categories, broker_unreachable, caplog
) -> None:
    before = value(scrape(), "diagnosis_enqueue_failures_total")

    with transaction.atomic():
        case = a_case()

    assert CaseLibrary.objects.filter(case_id=case.case_id).exists()
    (failure,) = failures(caplog)
    assert failure.levelno == logging.ERROR
    assert failure.task == INDEX_TASK
    assert value(scrape(), "diagnosis_enqueue_failures_total") == before + 1


def test_an_indexer_task_that_cannot_hand_over_to_its_next_run_is_logged_and_counted(
    broker_unreachable, settings, caplog
) -> None:
    # Run by a worker (not inline), for 0.02 s.
    settings.Q_CLUSTER = settings.Q_CLUSTER | {"sync": False, "timeout": 0.03}
    settings.CASE_INDEXER_POLL_SECONDS = 0.01
    before = value(scrape(), "diagnosis_enqueue_failures_total")

    assert case_indexer_task() is not None  # it ran, then could not queue its next run

    (failure,) = failures(caplog)
    assert failure.task == INDEX_TASK
    assert value(scrape(), "diagnosis_enqueue_failures_total") == before + 1


def test_a_case_write_queues_one_indexer_task_once_it_commits(
    categories, queued_for_a_worker
) -> None:
    with transaction.atomic():
        a_case()
        assert OrmQ.objects.count() == 0  # not yet: the transaction is still open

    assert [task.func() for task in OrmQ.objects.all()] == [INDEX_TASK]


def test_a_rolled_back_case_write_queues_nothing(categories, queued_for_a_worker) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        a_case()
        raise RuntimeError("the caller's transaction fails after the write")

    assert OrmQ.objects.count() == 0


def test_an_indexer_holding_the_lease_at_the_commit_is_left_to_find_the_case(
    categories, queued_for_a_worker
) -> None:
    with transaction.atomic():
        a_case()
        # The lease is taken after the write asked, before it commits: the commit decides.
        hold_the_lease()

    assert OrmQ.objects.count() == 0


def test_a_lease_that_lapsed_by_the_commit_does_not_keep_the_indexer_from_being_queued(
    categories, queued_for_a_worker
) -> None:
    hold_the_lease()
    with transaction.atomic():
        a_case()
        CaseIndexState.objects.filter(id=1).update(building_since=None)

    assert [task.func() for task in OrmQ.objects.all()] == [INDEX_TASK]


def test_case_writes_with_requests_deferred_queue_nothing(categories, queued_for_a_worker) -> None:
    with transaction.atomic(), case_index_requests_deferred():
        a_case("one")
        a_case("two")

    assert OrmQ.objects.count() == 0
