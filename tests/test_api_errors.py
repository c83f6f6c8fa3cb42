"""Every error of every /api/ endpoint, and of /api/ paths that do not exist, is one JSON
shape with a Chinese message; /api/feedback keeps the contract's own shape."""

import gzip
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory
from rest_framework import exceptions
from rest_framework.test import APIClient

from config.api import api_error_of
from config.errors import server_error
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def assert_error_shape(response, status: int, code: str) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = json.loads(response.content)
    assert list(body)[:3] == ["success", "message", "code"]
    assert body["success"] is False
    assert body["code"] == code
    assert CHINESE.search(body["message"]), body["message"]
    return body


@pytest.mark.parametrize(
    "path", ["/api/", "/api/nothing-here", "/api/sessions/s-1/unknown", "/api/feedback/"]
)
@pytest.mark.parametrize("debug", [False, True])
def test_an_unknown_api_path_is_a_json_404(api, settings, path, debug) -> None:
    settings.DEBUG = debug

    body = assert_error_shape(api.get(path), 404, "not_found")

    assert body["message"] == "接口不存在"


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize("path", ["/api/feedback/", "/api/sessions/", "/api/foo", "/api"])
@pytest.mark.parametrize("credentials", ["nothing", "an API key", "a login session"])
@pytest.mark.parametrize("debug", [False, True])
def test_a_write_to_an_unknown_api_path_is_the_json_404_not_a_csrf_page(
    make_client, settings, method, path, credentials, debug
) -> None:
    settings.DEBUG = debug
    # A real client sends no CSRF token; the test client only checks it when told to.
    client = Client(enforce_csrf_checks=True)
    headers = {}
    if credentials == "an API key":
        headers["Authorization"] = f"Api-Key {make_client().raw_key}"
    if credentials == "a login session":
        client.force_login(get_user_model().objects.create_user("ops.user"))

    response = getattr(client, method)(path, "{}", content_type="application/json", headers=headers)

    body = assert_error_shape(response, 404, "not_found")
    assert body["message"] == "接口不存在"


def test_pages_outside_the_api_keep_django_s_html_404(client) -> None:
    response = client.get("/no-such-page")

    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    ("method", "path"),
    [("delete", "/api/sessions/s-1"), ("put", "/api/sessions"), ("delete", "/api/cases")],
)
def test_a_method_an_endpoint_does_not_take_is_a_json_405(api, method, path) -> None:
    DiagnosisSessionFactory(session_id="s-1")

    body = assert_error_shape(getattr(api, method)(path), 405, "method_not_allowed")

    assert body["message"] == "不支持该请求方法"


def test_a_missing_key_is_401_and_still_names_the_scheme() -> None:
    response = APIClient().get("/api/sessions")

    assert_error_shape(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Api-Key"


def test_a_key_of_the_wrong_scope_is_403(make_client) -> None:
    assert_error_shape(make_client("frontend").get("/api/cases"), 403, "permission_denied")


def test_an_invalid_body_is_400_with_each_field_named(api) -> None:
    response = api.post("/api/sessions", {"query": 5, "colour": "red"}, format="json")

    body = assert_error_shape(response, 400, "invalid")
    assert body["message"] == "请求参数无效"
    assert body["errors"] == {"colour": ["Unknown field."]}


def test_a_body_that_is_not_json_is_400_saying_why(api) -> None:
    response = api.generic("POST", "/api/sessions", b"{", content_type="application/json")

    body = assert_error_shape(response, 400, "parse_error")
    assert body["message"].startswith("请求体不是合法的 JSON")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/sessions", '{"query": "q", "bogus\\ud800": 1}'),
        ("/api/cases/search", '{"query": "q", "\\udfff": 1}'),
        ("/api/sessions/s-1/complete", '{"status": "\\ud800", "answer": "a"}'),
        ("/api/sessions/s-1/tool-invocations", '[{"toolName": "T", "status": "\\udfff"}]'),
    ],
    ids=["unknown-key", "search-key", "status", "invocation-status"],
)
def test_a_lone_surrogate_quoted_back_in_a_400_is_escaped_not_a_500(api, path, body) -> None:
    DiagnosisSessionFactory(session_id="s-1")

    response = api.post(path, body, content_type="application/json")

    assert_error_shape(response, 400, "invalid")
    assert "\\ud800" in response.content.decode() or "\\udfff" in response.content.decode()


def test_a_body_that_is_not_declared_as_json_is_415(api) -> None:
    response = api.post("/api/sessions", "query=x", content_type="text/plain")

    assert_error_shape(response, 415, "unsupported_media_type")


def test_a_compressed_body_is_415_saying_to_send_it_uncompressed(api) -> None:
    body = gzip.compress(json.dumps({"query": "磁盘满了"}).encode())

    response = api.post(
        "/api/sessions", body, content_type="application/json", HTTP_CONTENT_ENCODING="gzip"
    )

    body = assert_error_shape(response, 415, "unsupported_content_encoding")
    assert "Content-Encoding: gzip" in body["message"]


def test_a_body_over_the_limit_is_413(api, settings) -> None:
    settings.API_MAX_BODY_BYTES = 1024
    body = json.dumps({"query": "x" * 2048})

    response = api.generic("POST", "/api/sessions", body, content_type="application/json")

    assert_error_shape(response, 413, "payload_too_large")


def test_a_conflict_is_409(api) -> None:
    DiagnosisSessionFactory(session_id="dup")

    response = api.post("/api/sessions", {"sessionId": "dup", "query": "q"}, format="json")

    assert_error_shape(response, 409, "conflict")


def test_an_internal_error_under_the_api_is_a_json_500() -> None:
    response = server_error(RequestFactory().get("/api/sessions"))

    assert_error_shape(response, 500, "server_error")


def test_the_feedback_endpoint_keeps_the_contract_shape_for_errors_outside_drf() -> None:
    response = server_error(RequestFactory().post("/api/feedback"))

    assert response.status_code == 500
    assert json.loads(response.content) == {
        "success": False,
        "message": "服务内部错误，已记录日志",
        "caseId": None,
    }


def test_the_schema_documents_the_error_shape_and_the_feedback_exception(api) -> None:
    schema = APIClient().get("/api/schema", HTTP_ACCEPT="application/json").json()

    error = schema["components"]["schemas"]["Error"]
    assert {"success", "message", "code"} <= set(error["required"])
    feedback = schema["paths"]["/api/feedback"]["post"]
    assert "The contract fixes this endpoint's bodies" in feedback["description"]


def test_drf_s_own_english_refusals_are_given_chinese_words() -> None:
    error = api_error_of(exceptions.NotAuthenticated())

    assert (error.status, error.code, error.message) == (
        401,
        "not_authenticated",
        "缺少或无效的 API Key",
    )


def test_a_failed_session_nobody_scored_is_not_pending_a_score() -> None:
    from diagnosis.models import DiagnosisSession
    from diagnosis.selectors import sessions_in_score_band

    DiagnosisSessionFactory(session_id="failed", failed=True)
    DiagnosisSessionFactory(session_id="waiting", succeeded=True)

    pending = sessions_in_score_band(DiagnosisSession.objects.all(), band="pending")

    assert list(pending.values_list("session_id", flat=True)) == ["waiting"]
