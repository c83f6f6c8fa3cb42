"""A feedback token rates the session it was made for, not a later one that took the same
sessionId after the first was purged (retention, or an operator)."""

from datetime import timedelta

import pytest
from django.core import signing
from django.core.cache import cache
from rest_framework.test import APIClient

from diagnosis.feedback_tokens import SALT, FeedbackTokenInvalid, feedback_token_read
from diagnosis.models import DiagnosisSession
from feedback.retention import sessions_purge

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
OTHER_SESSION = {"success": False, "message": "该反馈令牌不属于此会话", "caseId": None}


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    cache.clear()


def rate(token: str, session_id: str = "reused-1"):  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Feedback {token}")
    return client.post(URL, {"sessionId": session_id, "feedback": "not_useful"}, format="json")


def answered_session(agent: APIClient, session_id: str = "reused-1") -> dict:
    agent.post("/api/sessions", {"sessionId": session_id, "query": "磁盘满了"}, format="json")
    return agent.post(
        f"/api/sessions/{session_id}/complete",
        {"status": "SUCCESS", "answer": "清理日志"},
        format="json",
    ).json()


def purged_and_taken_again(agent: APIClient, session_id: str = "reused-1") -> None:
    assert sessions_purge(older_than=timedelta(0)).sessions == 1
    answered_session(agent, session_id)


def refreshed_token(session_id: str, make_client) -> str:  # type: ignore[no-untyped-def]
    response = make_client("frontend").post(f"/api/sessions/{session_id}/feedback-token")
    assert response.status_code == 200
    return response.json()["feedbackToken"]


def token_made_before_the_change(session_id: str) -> str:
    """A token as they were made before they named the session's row: the sessionId alone."""
    return signing.dumps(session_id, salt=SALT, compress=False)


def test_a_refreshed_token_of_a_purged_session_is_refused_for_the_session_that_took_its_id(
    make_client,
) -> None:
    agent = make_client("agent")
    answered_session(agent)
    token = refreshed_token("reused-1", make_client)

    purged_and_taken_again(agent)
    response = rate(token)

    assert response.status_code == 403
    assert response.json() == OTHER_SESSION
    assert DiagnosisSession.objects.get(session_id="reused-1").feedback is None


def test_the_complete_replys_token_of_a_purged_session_is_refused_for_the_new_one(
    make_client,
) -> None:
    agent = make_client("agent")
    token = answered_session(agent)["feedbackToken"]

    purged_and_taken_again(agent)

    assert rate(token).json() == OTHER_SESSION


def test_the_new_sessions_own_token_works(make_client) -> None:
    agent = make_client("agent")
    answered_session(agent)
    purged_and_taken_again(agent)

    response = rate(refreshed_token("reused-1", make_client))

    assert response.status_code == 200
    assert DiagnosisSession.objects.get(session_id="reused-1").feedback == "not_useful"


def test_a_token_made_before_the_change_still_rates_its_session_until_it_expires(
    make_client,
) -> None:
    answered_session(make_client("agent"))

    response = rate(token_made_before_the_change("reused-1"))

    assert response.status_code == 200


def test_a_refreshed_token_names_the_sessions_row(make_client) -> None:
    answered_session(make_client("agent"))

    claims = feedback_token_read(token=refreshed_token("reused-1", make_client))

    assert claims.session_id == "reused-1"
    assert claims.session_pk == DiagnosisSession.objects.get(session_id="reused-1").pk


def test_a_token_naming_a_row_in_a_shape_never_signed_is_refused() -> None:
    for payload in (["reused-1"], ["reused-1", "7"], ["reused-1", True], {"s": "reused-1"}):
        with pytest.raises(FeedbackTokenInvalid):
            feedback_token_read(token=signing.dumps(payload, salt=SALT))


def test_a_token_of_a_purged_session_nobody_took_again_finds_no_session(make_client) -> None:
    agent = make_client("agent")
    answered_session(agent)
    token = refreshed_token("reused-1", make_client)
    sessions_purge(older_than=timedelta(0))

    response = rate(token)

    assert response.status_code == 404
    assert response.json()["message"] == "会话不存在"
