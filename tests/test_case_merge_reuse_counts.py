"""A merge's reuse counts: the kept case counts as if every session that found either case
had found it (each search and each session once), the minute's recount agrees, and a case
freed when its kept case is deleted gets its own counts back."""

import pytest

from caselibrary.models import CaseLibrary, CaseReuse
from caselibrary.services.duplicates import case_merge, case_merge_into
from caselibrary.services.index import case_index_build
from caselibrary.services.outcomes import case_outcomes_sweep
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory
from tests.near_duplicates import near_duplicate_pair

pytestmark = pytest.mark.django_db

# What the searches find in the pair (tests/near_duplicates.py), older case A, newer B:
BOTH_L1 = "订单库锁等待超时"  # A at L1 and B at L1
A_L0_B_L1 = "订单库锁等待超时导致下单失败"  # A at L0 (its title), B at L1
ONLY_B = "订单库锁等待超时，下单失败"  # with limit 1: B at L0 (its title)


@pytest.fixture
def pair():  # type: ignore[no-untyped-def]
    older, newer, _unrelated = near_duplicate_pair()
    return older, newer


def session_that_searched(api, session_id: str, query: str, limit: int = 5) -> list[str]:  # type: ignore[no-untyped-def]
    DiagnosisSessionFactory(session_id=session_id)
    body = api.post(
        "/api/cases/search",
        {"query": query, "sessionId": session_id, "limit": limit},
        format="json",
    ).json()
    api.post(
        f"/api/sessions/{session_id}/complete",
        {"status": "SUCCESS", "answer": "根因：长事务。"},
        format="json",
    )
    return [hit["caseId"] for hit in body["hits"]]


def counts(case: CaseLibrary) -> tuple[int, int, int, int]:
    reuse = CaseReuse.objects.filter(case=case).first() or CaseReuse()
    return reuse.l0_hits, reuse.l1_hits, reuse.sessions_useful, reuse.sessions_not_useful


def merge(newer: CaseLibrary, older: CaseLibrary) -> None:
    case_merge(case_id=newer.case_id, other_id=older.case_id, updated_by="curator")
    case_index_build()  # the merged case leaves the index


def test_a_session_that_found_both_cases_counts_once_for_the_kept_case(api, pair) -> None:
    a, b = pair
    assert session_that_searched(api, "s1", BOTH_L1) == [a.case_id, b.case_id]
    feedback_submit(session_id="s1", feedback="useful")
    case_outcomes_sweep()
    assert counts(a) == counts(b) == (0, 1, 1, 0)

    merge(b, a)

    assert counts(a) == (0, 1, 1, 0)
    assert counts(b) == (0, 0, 0, 0)


def test_the_minute_recount_after_a_merge_counts_each_session_once(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "s1", BOTH_L1)
    feedback_submit(session_id="s1", feedback="useful")
    case_outcomes_sweep()
    merge(b, a)

    assert session_that_searched(api, "s2", BOTH_L1) == [a.case_id]
    feedback_submit(session_id="s2", feedback="not_useful")
    case_outcomes_sweep()

    assert counts(a) == (0, 2, 1, 1)
    assert counts(b) == (0, 0, 0, 0)


def test_a_search_that_found_both_at_different_levels_counts_once_at_the_better(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "s1", A_L0_B_L1)
    assert (counts(a), counts(b)) == ((1, 0, 0, 0), (0, 1, 0, 0))

    merge(b, a)

    assert counts(a) == (1, 0, 0, 0)


def test_the_recount_keeps_the_ratings_of_sessions_that_found_only_the_merged_case(
    api, pair
) -> None:
    a, b = pair
    assert session_that_searched(api, "only-b", ONLY_B, limit=1) == [b.case_id]
    feedback_submit(session_id="only-b", feedback="useful")
    case_outcomes_sweep()
    merge(b, a)
    assert counts(a) == (1, 0, 1, 0)

    session_that_searched(api, "s2", BOTH_L1)
    feedback_submit(session_id="s2", feedback="not_useful")
    case_outcomes_sweep()

    assert counts(a) == (1, 1, 1, 1)


def test_a_session_rated_after_the_merge_counts_for_the_kept_case_only(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "s1", BOTH_L1)
    merge(b, a)

    feedback_submit(session_id="s1", feedback="not_useful")
    case_outcomes_sweep()

    assert counts(a) == (0, 1, 0, 1)
    assert counts(b) == (0, 0, 0, 0)


def test_the_imports_merge_counts_the_same_way_whichever_case_is_kept(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "s1", BOTH_L1)
    session_that_searched(api, "s2", A_L0_B_L1)
    feedback_submit(session_id="s1", feedback="useful")
    feedback_submit(session_id="s2", feedback="useful")
    case_outcomes_sweep()

    case_merge_into(case_id=a.case_id, kept_id=b.case_id, updated_by="import")

    assert counts(b) == (1, 1, 2, 0)
    assert counts(a) == (0, 0, 0, 0)


def test_deleting_the_kept_case_gives_the_freed_case_its_own_counts_back(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "s1", BOTH_L1)
    session_that_searched(api, "only-b", ONLY_B, limit=1)
    feedback_submit(session_id="s1", feedback="useful")
    feedback_submit(session_id="only-b", feedback="not_useful")
    case_outcomes_sweep()
    merge(b, a)
    assert counts(b) == (0, 0, 0, 0)

    a.delete()
    case_index_build()  # the indexer sees the deletion and frees B

    assert counts(b) == (1, 1, 1, 1)
