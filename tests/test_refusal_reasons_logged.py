"""A refused request's log line says why it was refused, as its answer does: an OTLP
exporter prints only "403 Forbidden", so the operator reads the reason in the log."""

import json

import pytest
from django.test import Client

from diagnosis.models import ApiKey, ApiKeyScope
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

EMPTY_EXPORT = b'{"resourceSpans": []}'


def _refusals(json_lines: list[str]) -> list[dict]:
    return [
        entry
        for entry in map(json.loads, json_lines)
        if entry["logger"] == "django.request" and 400 <= entry.get("status_code", 0) < 500
    ]


def _key(scope: str) -> str:
    return ApiKey.objects.create_key(name=f"agent-{scope}", scope=scope)[1]


def test_an_export_refused_for_its_keys_scope_is_logged_with_that_reason(json_lines) -> None:
    key = _key(ApiKeyScope.FRONTEND)

    response = Client().post(
        "/v1/traces",
        EMPTY_EXPORT,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Api-Key {key}",
    )

    assert response.status_code == 403
    [line] = _refusals(json_lines)
    assert line["reason"] == "该 API Key 的权限范围不允许上报数据"
    assert key.split(".")[-1] not in json.dumps(line)


def test_an_export_over_plain_http_is_logged_with_that_reason(json_lines, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    key = _key("full")

    response = Client().post(
        "/v1/traces",
        EMPTY_EXPORT,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Api-Key {key}",
    )

    assert response.status_code == 403
    [line] = _refusals(json_lines)
    assert line["reason"].startswith("只接受 HTTPS 请求")


def test_an_export_without_a_key_is_logged_with_that_reason(json_lines) -> None:
    response = Client().post("/v1/traces", EMPTY_EXPORT, content_type="application/json")

    assert response.status_code == 401
    [line] = _refusals(json_lines)
    assert line["reason"] == "缺少请求头 'Authorization: Api-Key <key>'"


def test_an_api_request_refused_as_invalid_is_logged_with_its_code_and_message(
    api, json_lines
) -> None:
    response = api.post("/api/sessions", {"sessionId": "a b", "query": "q"}, format="json")

    assert response.status_code == 400
    [line] = _refusals(json_lines)
    assert line["reason"] == f"{response.json()['code']}: {response.json()['message']}"


@pytest.mark.parametrize(
    "body",
    [{"sessionId": "s-1", "feedback": "meh"}, {"sessionId": "nope", "feedback": "useful"}],
    ids=["invalid", "unknown session"],
)
def test_a_refused_feedback_is_logged_with_the_message_it_answered(api, json_lines, body) -> None:
    DiagnosisSessionFactory(session_id="s-1", succeeded=True)

    response = api.post("/api/feedback", body, format="json")

    assert response.status_code in (400, 404)
    [line] = _refusals(json_lines)
    assert line["reason"] == response.json()["message"]


def test_a_reason_is_cut_to_a_readable_length(api, json_lines) -> None:
    response = api.post("/api/sessions", {"sessionId": "x" * 5000, "query": "q"}, format="json")

    assert response.status_code == 400
    [line] = _refusals(json_lines)
    assert 0 < len(line["reason"]) <= 300
