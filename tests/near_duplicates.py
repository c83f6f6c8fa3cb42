"""Cases the indexer flags as saying the same thing, for the near-duplicate tests."""

from caselibrary.models import CaseDuplicate, CaseLibrary
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory


def near_duplicate_pair() -> tuple[CaseLibrary, CaseLibrary, CaseLibrary]:
    """An older case, a newer one indexed after it that says the same, and one unrelated."""
    older = CaseLibraryFactory(
        title="订单库锁等待超时导致下单失败",
        error_code="ERROR 1205",
        root_cause="长事务持有 t_order 行锁不释放，其他事务等待超时。",
        solution="查 innodb_trx 找到长事务并 kill，拆分大事务。",
    )
    case_index_build()
    newer = CaseLibraryFactory(
        title="订单库锁等待超时，下单失败",
        error_code=None,
        root_cause="长事务持有 t_order 的行锁不释放，其它事务等待超时。",
        solution="查 innodb_trx 找出长事务并 kill，把大事务拆小。",
    )
    unrelated = CaseLibraryFactory(
        title="Kafka consumer lag keeps growing",
        error_code=None,
        root_cause="Consumers exceed max.poll.interval.ms and the group rebalances.",
        solution="Lower max.poll.records.",
    )
    case_index_build()
    return older, newer, unrelated


def flag_near_duplicates(newer: CaseLibrary, older: CaseLibrary) -> None:
    """`newer` flagged as saying the same as `older`, as the indexer flags it, without
    indexing either: the admin and case_merge merge only a flagged pair."""
    CaseDuplicate.objects.get_or_create(
        case_id=newer.pk, similar_id=older.pk, defaults={"similarity": 0.97}
    )
