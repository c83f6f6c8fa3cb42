"""POST /api/sessions/{sessionId}/feedback-token: a fresh feedback token for a page whose
token expired. The chat front end's back end holds a `frontend` key, which may send
feedback but not read sessions: this is where it gets a token to hand to the page."""

import time

import pytest
import yaml
from django.core.cache import cache
from rest_framework.test import APIClient

from diagnosis.feedback_tokens import feedback_token_for, feedback_token_read
from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from tests.factories import DiagnosisSessionFactory
from tests.test_openapi import assert_served_as_documented

pytestmark = pytest.mark.django_db

PAGE = "https://chat.example.com"
PATH = "/api/sessions/{sessionId}/feedback-token"


def refresh_url(session_id: str) -> str:
    return PATH.replace("{sessionId}", session_id)


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    cache.clear()


@pytest.fixture
def finished() -> DiagnosisSession:
    return DiagnosisSessionFactory(session_id="ref-1", succeeded=True)


@pytest.fixture
def schema() -> dict:
    response = APIClient().get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi")
    return yaml.safe_load(response.content)


def page_sends(token: str, body: dict):  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Feedback {token}", HTTP_ORIGIN=PAGE)
    return client.post("/api/feedback", body, format="json")


def test_a_frontend_key_gets_a_token_that_works_from_the_chat_page(
    finished, make_client, settings
) -> None:
    settings.CORS_ALLOWED_ORIGINS = [PAGE]
    settings.FEEDBACK_TOKEN_MAX_AGE = 3600

    response = make_client("frontend").post(refresh_url("ref-1"))

    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["sessionId", "feedbackToken", "expiresIn"]
    assert (body["sessionId"], body["expiresIn"]) == ("ref-1", 3600)
    assert feedback_token_read(token=body["feedbackToken"]).session_id == "ref-1"
    sent = page_sends(body["feedbackToken"], {"sessionId": "ref-1", "feedback": "not_useful"})
    assert sent.status_code == 200
    assert sent.json() == {"success": True, "message": "反馈已记录", "caseId": None}
    assert sent.headers["access-control-allow-origin"] == PAGE
    assert DiagnosisSession.objects.get().feedback == "not_useful"


def test_a_page_whose_token_expired_sends_its_feedback_with_the_fresh_one(
    finished, make_client, settings, monkeypatch
) -> None:
    settings.CORS_ALLOWED_ORIGINS = [PAGE]
    settings.FEEDBACK_TOKEN_MAX_AGE = 3600
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() - 3601)
    stale = feedback_token_for(session_id="ref-1")
    monkeypatch.undo()
    said = {"sessionId": "ref-1", "feedback": "not_useful", "comment": "根因不对"}

    refused = page_sends(stale, said)
    fresh = make_client("frontend").post(refresh_url("ref-1")).json()["feedbackToken"]
    accepted = page_sends(fresh, said)

    assert refused.status_code == 403
    assert refused.json()["message"] == "反馈令牌已过期，请刷新页面后重试"
    assert accepted.status_code == 200
    assert FeedbackEntry.objects.get().comment == "根因不对"


@pytest.mark.parametrize("scope", ["agent", "full"])
def test_keys_that_are_handed_tokens_with_their_sessions_get_one_here_too(
    finished, make_client, scope
) -> None:
    response = make_client(scope).post(refresh_url("ref-1"))

    assert response.status_code == 200
    assert feedback_token_read(token=response.json()["feedbackToken"]).session_id == "ref-1"


def test_a_curator_key_is_403(finished, make_client) -> None:
    response = make_client("curator").post(refresh_url("ref-1"))

    assert response.status_code == 403
    assert response.json() == {
        "success": False,
        "message": "该 API Key 的权限范围不允许此操作",
        "code": "permission_denied",
    }


def test_no_key_is_401_and_a_feedback_token_opens_nothing_here(finished) -> None:
    holder = APIClient()
    holder.credentials(HTTP_AUTHORIZATION=f"Feedback {feedback_token_for(session_id='ref-1')}")

    assert APIClient().post(refresh_url("ref-1")).status_code == 401
    assert holder.post(refresh_url("ref-1")).status_code == 401


def test_an_unknown_session_is_404_in_the_apis_shape(db, make_client) -> None:
    response = make_client("frontend").post(refresh_url("nobody"))

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": '会话 "nobody" 不存在',
        "code": "not_found",
    }


def test_a_malformed_session_id_is_400(db, make_client) -> None:
    response = make_client("frontend").post(refresh_url("a b"))

    assert response.status_code == 400
    assert "sessionId" in response.json()["errors"]


def test_a_running_session_gets_a_token_and_feedback_refuses_what_it_must(
    make_client,
) -> None:
    DiagnosisSessionFactory(session_id="ref-run")

    token = make_client("frontend").post(refresh_url("ref-run")).json()["feedbackToken"]
    sent = page_sends(token, {"sessionId": "ref-run", "feedback": "useful"})

    assert sent.status_code == 409
    assert DiagnosisSession.objects.get().feedback is None


def test_the_endpoint_is_in_the_schema_with_each_of_its_responses(schema) -> None:
    operation = schema["paths"][PATH]["post"]

    assert {"200", "400", "401", "403", "404", "413", "503"} <= set(operation["responses"])
    assert {"ApiKey": []} in operation["security"]


def test_a_token_as_served_matches_its_schema(schema, finished, make_client) -> None:
    client = make_client("frontend")

    assert_served_as_documented(schema, PATH, "post", client.post(refresh_url("ref-1")))
    assert_served_as_documented(schema, PATH, "post", client.post(refresh_url("nobody")))
