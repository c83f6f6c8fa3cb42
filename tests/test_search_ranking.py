"""How similar cases are ordered: the fused ranking, raised by the question's words a case
holds."""

import pytest

from caselibrary.models import CasePassage
from caselibrary.search_engine import L1, rank_cases
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

QUESTION = "kafka consumer lag keeps growing after a rebalance"


class FixedRankings:
    """Both rankings put `first` above `second`, whatever the question."""

    def __init__(self, first: str, second: str) -> None:
        self.order = [(first, 0.6), (second, 0.5)]

    def lexical(self, terms: str, depth: int) -> list[tuple[str, float]]:
        return self.order

    def dense(self, vector: object, depth: int) -> list[tuple[str, float]]:
        return self.order


@pytest.fixture
def two_cases(db):  # type: ignore[no-untyped-def]
    lag = CaseLibraryFactory(
        title="Kafka consumer lag keeps growing after a rebalance storm",
        root_cause="Consumers exceed max.poll.interval.ms, the group rebalances again.",
        solution="Lower max.poll.records.",
    )
    cpu = CaseLibraryFactory(
        title="CPU 使用率飙高：频繁 Full GC",
        root_cause="老年代被大对象占满，JVM 频繁 Full GC。",
        solution="调整堆大小。",
    )
    case_index_build()
    titles = {
        case.case_id: f"{case.case_id}:{number}"
        for case in (lag, cpu)
        for number in CasePassage.objects.filter(case_id=case.case_id, kind="title").values_list(
            "number", flat=True
        )
    }
    return lag, cpu, titles


def similar_order(**kwargs: object) -> list[str]:
    ranked = rank_cases(query=QUESTION, limit=3, **kwargs)
    return [hit.case_id for hit in ranked.candidates if hit.match_level == L1]


def test_a_case_holding_the_questions_words_ranks_above_one_both_rankings_put_first(
    two_cases,
) -> None:
    lag, cpu, titles = two_cases
    rankings = FixedRankings(first=titles[cpu.case_id], second=titles[lag.case_id])

    assert similar_order(backend=rankings) == [lag.case_id, cpu.case_id]


def test_without_the_coverage_weight_the_fused_order_stands(two_cases, settings) -> None:
    settings.CASE_SEARCH_COVERAGE_WEIGHT = 0
    lag, cpu, titles = two_cases
    rankings = FixedRankings(first=titles[cpu.case_id], second=titles[lag.case_id])

    assert similar_order(backend=rankings) == [cpu.case_id, lag.case_id]
