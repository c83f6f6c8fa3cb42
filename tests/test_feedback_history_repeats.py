"""A repeated feedback body (a widget's retry after a timeout whose first request did
arrive) keeps one row of history: repeating a value changes nothing. A different word, a
different verdict or another credential is a new statement, and so is the same body
again after a different one."""

import pytest
from rest_framework.test import APIClient

from caselibrary.models import CaseLibrary
from diagnosis.feedback_tokens import feedback_token_for
from diagnosis.models import ApiKey, DiagnosisSession
from feedback.models import FeedbackEntry
from feedback.services import feedback_submit
from tests.concurrency import race
from tests.factories import DiagnosisSessionFactory, FaultCategoryFactory

URL = "/api/feedback"
SAID = {
    "sessionId": "rep-1",
    "feedback": "not_useful",
    "reason": "wrong_root_cause",
    "comment": "根因不对",
    "correction": "磁盘 inode 耗尽，不是容量满",
}


@pytest.fixture
def finished(db) -> DiagnosisSession:  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="rep-1", succeeded=True)


def browser() -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Feedback {feedback_token_for(session_id='rep-1')}")
    return client


def send(client: APIClient, **changes: object) -> dict:
    response = client.post(URL, {**SAID, **changes}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def history() -> list[tuple[str, str, str, str, str]]:
    """The session's rows, oldest first: feedback, reason, comment, correction, channel."""
    return list(
        FeedbackEntry.objects.order_by("created_at", "id").values_list(
            "feedback", "reason", "comment", "correction", "channel"
        )
    )


def test_the_same_body_twice_keeps_one_row(finished) -> None:
    reader = browser()

    first, second = send(reader), send(reader)

    assert first == second == {"success": True, "message": "反馈已记录", "caseId": None}
    assert history() == [
        ("not_useful", "wrong_root_cause", "根因不对", "磁盘 inode 耗尽，不是容量满", "token")
    ]
    assert DiagnosisSession.objects.get().feedback == "not_useful"


def test_the_same_body_twice_with_an_api_key_keeps_one_row(finished, make_client) -> None:
    frontend = make_client("frontend")

    send(frontend)
    send(frontend)

    assert [row[4] for row in history()] == ["api_key"]


def test_a_different_comment_is_a_second_row(finished) -> None:
    reader = browser()

    send(reader)
    send(reader, comment="根因不对，看 inode")

    assert [row[2] for row in history()] == ["根因不对", "根因不对，看 inode"]


def test_the_same_body_after_a_different_one_is_a_third_row(finished) -> None:
    reader = browser()

    send(reader)
    send(reader, comment="补充：df -i 显示 100%")
    send(reader)

    assert [row[2] for row in history()] == ["根因不对", "补充：df -i 显示 100%", "根因不对"]


def test_the_same_words_with_another_verdict_are_a_second_row(finished) -> None:
    FaultCategoryFactory(code="GENERAL")
    reader = browser()

    send(reader)
    # A reason goes with not_useful only: the same comment and correction.
    useful = send(reader, feedback="useful", reason=None)

    assert [row[0] for row in history()] == ["not_useful", "useful"]
    assert useful["caseId"] == CaseLibrary.objects.get().case_id


def test_the_same_words_with_another_credential_are_a_second_row(finished, make_client) -> None:
    send(browser())
    send(make_client("frontend"))

    assert [row[4] for row in history()] == ["token", "api_key"]


def test_a_repeated_useful_with_words_still_returns_its_case_and_keeps_one_row(finished) -> None:
    FaultCategoryFactory(code="GENERAL")
    reader = browser()

    first = send(reader, feedback="useful", reason=None, correction=None)
    second = send(reader, feedback="useful", reason=None, correction=None)

    assert first["caseId"] == second["caseId"] == CaseLibrary.objects.get().case_id
    assert history() == [("useful", "", "根因不对", "", "token")]


def test_the_service_keeps_one_row_for_a_repeat_too(finished) -> None:
    for _ in range(2):
        feedback_submit(session_id="rep-1", feedback="not_useful", comment="根因不对")

    assert history() == [("not_useful", "", "根因不对", "", "api_key")]


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_the_same_body_at_once_keeps_one_row() -> None:
    DiagnosisSessionFactory(session_id="rep-1", succeeded=True)
    key = ApiKey.objects.create_key(name="retries", scope="frontend")[1]

    def retry(client: APIClient) -> int:
        return client.post(URL, SAID, format="json").status_code

    statuses = race(key, [retry] * 12)

    assert statuses == [200] * 12
    assert len(history()) == 1
    assert DiagnosisSession.objects.get().feedback == "not_useful"
