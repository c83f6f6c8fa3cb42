"""Races on /api/feedback on MariaDB: the unique key decides, nobody gets a 500."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from caselibrary.models import CaseLibrary
from diagnosis.models import ApiKey, DiagnosisSession
from tests.concurrency import race
from tests.factories import DiagnosisSessionFactory
from tests.processes import child_env, post_json, start_gunicorn, stop_group

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]

THREADS = 48


def _race(key: str, bodies: list[dict]) -> list[tuple[int, dict]]:
    def submit(body: dict):  # type: ignore[no-untyped-def]
        def call(client):  # type: ignore[no-untyped-def]
            response = client.post("/api/feedback", body, format="json")
            return response.status_code, response.json()

        return call

    return race(key, [submit(body) for body in bodies])


@pytest.fixture
def key() -> str:
    return ApiKey.objects.create_key(name="race", scope="frontend")[1]


def test_racing_useful_requests_make_one_case_and_all_get_its_id(key) -> None:
    DiagnosisSessionFactory(session_id="race-1", succeeded=True)

    results = _race(key, [{"sessionId": "race-1", "feedback": "useful"}] * THREADS)

    case = CaseLibrary.objects.get(diagnosis_id="race-1")
    assert [status for status, _ in results] == [200] * THREADS
    assert {body["caseId"] for _, body in results} == {case.case_id}
    assert CaseLibrary.objects.count() == 1
    assert DiagnosisSession.objects.get().feedback == "useful"


def test_racing_mixed_feedback_ends_consistent(key) -> None:
    DiagnosisSessionFactory(session_id="race-2", succeeded=True)
    bodies = [
        {"sessionId": "race-2", "feedback": "useful" if n % 2 else "not_useful"}
        for n in range(THREADS)
    ]

    results = _race(key, bodies)

    assert [status for status, _ in results] == [200] * THREADS
    session = DiagnosisSession.objects.get()
    assert session.feedback in {"useful", "not_useful"}
    assert session.status == "SUCCESS"
    assert CaseLibrary.objects.count() <= 1
    case_ids = {body["caseId"] for _, body in results if body["caseId"]}
    assert case_ids == set(CaseLibrary.objects.values_list("case_id", flat=True))


@pytest.mark.integration
@pytest.mark.slow
def test_a_hundred_concurrent_useful_requests_over_http_make_one_case(key) -> None:
    DiagnosisSessionFactory(session_id="race-http", succeeded=True)
    server, base = start_gunicorn(child_env(FEEDBACK_RATE_LIMIT="off"), workers=4)
    try:
        barrier = threading.Barrier(100)

        def submit(_: int) -> tuple[int, dict]:
            barrier.wait(timeout=30)
            return post_json(
                f"{base}/api/feedback", {"sessionId": "race-http", "feedback": "useful"}, key=key
            )

        with ThreadPoolExecutor(max_workers=100) as pool:
            results = list(pool.map(submit, range(100)))
    finally:
        stop_group(server)

    statuses = [status for status, _ in results]
    assert statuses == [200] * 100, sorted(set(statuses))
    case = CaseLibrary.objects.get(diagnosis_id="race-http")
    assert {body["caseId"] for _, body in results} == {case.case_id}
