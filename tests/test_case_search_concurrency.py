"""Searches recorded at once on MariaDB: sessions that find the same cases all get their
answer, and every search counts its hits."""

import pytest

from caselibrary.models import CaseReuse, CaseSearch, CaseSearchHit
from caselibrary.services.outcomes import cases_outcomes_recount
from diagnosis.models import ApiKey
from tests import case_search_library
from tests.case_search_library import URL
from tests.concurrency import race
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]

# Fixtures shared with the other modules, taken by name.
library = case_search_library.library

THREADS = 12
SEARCHES_EACH = 5
# Finds several cases of the library.
QUERY = "ERROR 1205 锁等待超时; Kafka consumer lag; Full GC; OOMKilled"


def _searches_at_once(key: str) -> list[tuple[int, dict]]:
    sessions = [
        [DiagnosisSessionFactory().session_id for _ in range(SEARCHES_EACH)] for _ in range(THREADS)
    ]

    def searches(session_ids: list[str]):  # type: ignore[no-untyped-def]
        def call(client):  # type: ignore[no-untyped-def]
            answers = []
            for session_id in session_ids:
                body = {"query": QUERY, "sessionId": session_id, "limit": 5}
                response = client.post(URL, body, format="json")
                answers.append((response.status_code, response.json()))
            return answers

        return call

    return [answer for answers in race(key, [searches(s) for s in sessions]) for answer in answers]


@pytest.fixture
def key() -> str:
    return ApiKey.objects.create_key(name="race", scope="full")[1]


@pytest.mark.parametrize("found_before", [False, True], ids=["first-found", "found-before"])
def test_sessions_searching_the_same_cases_at_once_all_get_answers_and_every_hit_counts(
    key, library, found_before: bool
) -> None:
    if found_before:
        CaseReuse.objects.bulk_create(CaseReuse(case=case) for case in library.values())

    answers = _searches_at_once(key)

    searches = THREADS * SEARCHES_EACH
    assert [status for status, _ in answers] == [200] * searches
    hits = answers[0][1]["hits"]
    assert len(hits) > 1
    assert all(body["hits"] == hits for _, body in answers)  # the same cases each time
    counted = {r.case_id: (r.l0_hits, r.l1_hits) for r in CaseReuse.objects.all()}
    for hit in hits:
        expected = (searches, 0) if hit["matchLevel"] == "L0" else (0, searches)
        assert counted[hit["caseId"]] == expected


def test_searches_answer_while_the_outcome_sweep_recounts_the_cases_they_find(key, library) -> None:
    """The worker's once-a-minute recount of rated cases writes the same reuse rows that
    searches count their hits in; neither may make the other fail."""
    # Every case was found by a session its user rated, so the recount writes each row.
    for case in library.values():
        rated = DiagnosisSessionFactory(useful=True)
        search = CaseSearch.objects.create(
            session=rated, invocation_id="seen", query="seen", query_key="seen", match_level="L1"
        )
        CaseSearchHit.objects.create(
            search=search,
            case_id=case.case_id,
            session_id=rated.session_id,
            match_level="L1",
            rank=1,
        )
    CaseReuse.objects.bulk_create(CaseReuse(case=case) for case in library.values())
    case_ids = [case.case_id for case in library.values()]

    def recounts(client):  # type: ignore[no-untyped-def]
        return [cases_outcomes_recount(case_ids=case_ids) for _ in range(SEARCHES_EACH * 4)]

    def searches(client):  # type: ignore[no-untyped-def]
        statuses = []
        for _ in range(SEARCHES_EACH):
            session_id = DiagnosisSessionFactory().session_id
            body = {"query": QUERY, "sessionId": session_id, "limit": 5}
            statuses.append(client.post(URL, body, format="json").status_code)
        return statuses

    results = race(key, [recounts] * 2 + [searches] * THREADS)

    assert results[:2] == [[len(case_ids)] * SEARCHES_EACH * 4] * 2
    assert [s for statuses in results[2:] for s in statuses] == [200] * THREADS * SEARCHES_EACH
    assert all(r.sessions_useful == 1 for r in CaseReuse.objects.all())
