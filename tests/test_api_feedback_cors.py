"""Pages of the configured origins may send feedback from the browser; nobody else."""

import pytest
from django.core.cache import cache
from django.test import Client

from diagnosis.feedback_tokens import feedback_token_for
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

PAGE = "https://chat.example.com"


def preflight(path: str = "/api/feedback", origin: str = PAGE):  # type: ignore[no-untyped-def]
    return Client().options(
        path,
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type",
    )


def test_no_origin_is_allowed_by_default() -> None:
    response = preflight()

    assert "access-control-allow-origin" not in response.headers


def test_a_configured_origin_gets_its_preflight_answered(settings) -> None:
    settings.CORS_ALLOWED_ORIGINS = [PAGE]

    response = preflight()

    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == PAGE
    assert "authorization" in response.headers["access-control-allow-headers"]
    assert "POST" in response.headers["access-control-allow-methods"]
    # The token is the credential: cookies are never asked for.
    assert "access-control-allow-credentials" not in response.headers


def test_another_origin_is_not_allowed(settings) -> None:
    settings.CORS_ALLOWED_ORIGINS = [PAGE]

    response = preflight(origin="https://evil.example.net")

    assert "access-control-allow-origin" not in response.headers


def test_only_the_feedback_endpoint_answers_cross_origin(settings) -> None:
    settings.CORS_ALLOWED_ORIGINS = [PAGE]

    assert "access-control-allow-origin" not in preflight("/api/sessions/x").headers
    assert "access-control-allow-origin" not in preflight("/api/cases").headers


def test_an_error_answer_is_readable_by_the_page(settings) -> None:
    settings.CORS_ALLOWED_ORIGINS = [PAGE]

    response = Client().post(
        "/api/feedback",
        {"sessionId": "x", "feedback": "useful"},
        content_type="application/json",
        HTTP_ORIGIN=PAGE,
        HTTP_AUTHORIZATION="Feedback forged",
    )

    assert response.status_code == 403
    assert response.headers["access-control-allow-origin"] == PAGE
    assert response.json()["message"] == "反馈令牌无效"


def test_a_page_can_read_how_long_to_wait_after_too_many_requests(settings) -> None:
    settings.CORS_ALLOWED_ORIGINS = [PAGE]
    settings.FEEDBACK_TOKEN_RATE_LIMIT = "1/min"
    DiagnosisSessionFactory(session_id="cors-1")  # still running: 409, then 429
    cache.clear()
    # One token for both: the limit is per token, and a token made in another second is
    # another token.
    token = feedback_token_for(session_id="cors-1")

    def send():  # type: ignore[no-untyped-def]
        return Client().post(
            "/api/feedback",
            {"sessionId": "cors-1", "feedback": "useful"},
            content_type="application/json",
            HTTP_ORIGIN=PAGE,
            HTTP_AUTHORIZATION=f"Feedback {token}",
        )

    first, second = send(), send()
    cache.clear()

    assert (first.status_code, second.status_code) == (409, 429)
    assert second.headers["access-control-allow-origin"] == PAGE
    assert int(second.headers["retry-after"]) > 0
    exposed = second.headers["access-control-expose-headers"].lower().split(", ")
    assert "retry-after" in exposed
