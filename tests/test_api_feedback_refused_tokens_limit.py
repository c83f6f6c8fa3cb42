"""Refused feedback tokens (forged, expired, of another session) count against the
per-address limit too: a script trying tokens from one address is told to wait (429)."""

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from diagnosis.feedback_tokens import feedback_token_for
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
PAGE = "https://chat.example.com"
TOO_MANY = {"success": False, "message": "请求过于频繁，请稍后再试", "caseId": None}


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "600/min"
    settings.CORS_ALLOWED_ORIGINS = [PAGE]
    cache.clear()


def post_with(token: str, address: str = "10.2.3.4", session_id: str = "lim-1"):  # type: ignore[no-untyped-def]
    client = APIClient(REMOTE_ADDR=address, HTTP_ORIGIN=PAGE)
    client.credentials(HTTP_AUTHORIZATION=f"Feedback {token}")
    return client.post(URL, {"sessionId": session_id, "feedback": "useful"}, format="json")


def test_650_forged_tokens_from_one_address_are_refused_with_429_past_the_limit() -> None:
    codes = [post_with(f"forged-{n}:AAAA:BBBB").status_code for n in range(650)]

    assert codes[:600] == [403] * 600
    assert codes[600:] == [429] * 50


def test_the_429_for_refused_tokens_is_the_contracts_with_retry_after_and_cors(settings) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "2/min"
    for _ in range(2):
        post_with("not-a-token")

    response = post_with("not-a-token")

    assert response.status_code == 429
    assert response.json() == TOO_MANY
    assert 1 <= int(response["Retry-After"]) <= 60
    assert response["Access-Control-Allow-Origin"] == PAGE
    assert "Retry-After" in response["Access-Control-Expose-Headers"]


def test_the_address_limit_is_checked_before_the_token(settings) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "3/min"
    DiagnosisSessionFactory(session_id="lim-1", succeeded=True)
    DiagnosisSessionFactory(session_id="lim-2", succeeded=True)
    good = feedback_token_for(session_id="lim-1")

    codes = [
        post_with("forged:AAAA:BBBB").status_code,
        post_with(feedback_token_for(session_id="lim-2")).status_code,  # another session's
        post_with(good).status_code,
        post_with(good).status_code,
    ]

    assert codes == [403, 403, 200, 429]


def test_a_valid_token_is_counted_once_per_request(settings) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "2/min"
    DiagnosisSessionFactory(session_id="lim-1", succeeded=True)
    good = feedback_token_for(session_id="lim-1")

    assert [post_with(good).status_code for _ in range(3)] == [200, 200, 429]


def test_refused_tokens_from_one_address_leave_other_addresses_alone(settings) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "2/min"
    DiagnosisSessionFactory(session_id="lim-1", succeeded=True)
    for _ in range(3):
        post_with("forged:AAAA:BBBB", address="10.6.6.6")

    response = post_with(feedback_token_for(session_id="lim-1"), address="10.7.7.7")

    assert response.status_code == 200


def test_api_key_requests_are_not_counted_per_address(settings, make_client) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "1/min"
    DiagnosisSessionFactory(session_id="lim-1", succeeded=True)
    backend = make_client("frontend")
    body = {"sessionId": "lim-1", "feedback": "useful"}

    codes = [backend.post(URL, body, format="json", REMOTE_ADDR="10.2.3.4").status_code]
    codes += [backend.post(URL, body, format="json", REMOTE_ADDR="10.2.3.4").status_code]

    assert codes == [200, 200]
