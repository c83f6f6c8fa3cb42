"""Searches recorded at once on MariaDB: sessions that find the same cases all get their
answer, and every search counts its hits."""

import pytest

from caselibrary.models import CaseReuse
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
