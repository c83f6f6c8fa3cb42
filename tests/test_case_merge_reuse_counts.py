"""A merge's reuse counts: the kept case counts as if every session that found either case
had found it (each search and each session once), the minute's recount agrees, and a case
freed when its kept case is deleted gets its own counts back. The last hit goes with the
counts."""

from datetime import UTC, datetime

import pytest

from caselibrary.models import CaseLibrary, CaseReuse, CaseSearch
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


EARLIER = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
LATER = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def searched_at(session_id: str, when: datetime) -> None:
    """The session's searches made at `when`, and the cases they found last hit then."""
    CaseSearch.objects.filter(session_id=session_id).update(created_at=when)
    found = CaseSearch.objects.filter(session_id=session_id).values("hits__case_id")
    CaseReuse.objects.filter(case_id__in=found).update(last_hit_at=when)


def last_hit(case: CaseLibrary) -> datetime | None:
    reuse = CaseReuse.objects.filter(case=case).first()
    return reuse.last_hit_at if reuse else None


def test_a_merge_gives_the_kept_case_the_merged_cases_later_last_hit_and_clears_it(
    api, pair
) -> None:
    a, b = pair
    session_that_searched(api, "s1", BOTH_L1)
    searched_at("s1", EARLIER)
    session_that_searched(api, "only-b", ONLY_B, limit=1)
    searched_at("only-b", LATER)

    merge(b, a)

    assert last_hit(a) == LATER
    assert counts(b) == (0, 0, 0, 0)
    assert last_hit(b) is None


def test_a_merge_leaves_the_kept_case_its_own_later_last_hit(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "only-b", ONLY_B, limit=1)
    searched_at("only-b", EARLIER)
    session_that_searched(api, "s1", BOTH_L1)
    searched_at("s1", LATER)

    merge(b, a)

    assert last_hit(a) == LATER
    assert last_hit(b) is None


def test_deleting_the_kept_case_gives_the_freed_case_its_own_last_hit_back(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "only-b", ONLY_B, limit=1)
    searched_at("only-b", EARLIER)
    session_that_searched(api, "s1", BOTH_L1)
    searched_at("s1", LATER)
    session_that_searched(api, "a-only", A_L0_B_L1, limit=1)
    searched_at("a-only", datetime(2026, 3, 3, 9, 0, tzinfo=UTC))
    merge(b, a)

    a.delete()
    case_index_build()

    assert counts(b) == (1, 1, 0, 0)
    assert last_hit(b) == LATER


def test_a_freed_case_whose_searches_are_gone_gets_no_last_hit_back(api, pair) -> None:
    a, b = pair
    session_that_searched(api, "only-b", ONLY_B, limit=1)
    searched_at("only-b", EARLIER)
    merge(b, a)
    CaseSearch.objects.filter(session_id="only-b").delete()  # as retention removes them

    a.delete()
    case_index_build()

    assert counts(b) == (0, 0, 0, 0)
    assert last_hit(b) is None
