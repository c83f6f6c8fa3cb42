"""A request whose Host header is not in ALLOWED_HOSTS is a 400 in the error shape of the
endpoint it was sent to: the API's JSON error, /api/feedback's contract, a google.rpc.Status
in the request's encoding on /v1/traces; the console's HTML page elsewhere (the admin). Any other
request Django refuses with a 400 is the same JSON 400 on the API (`bad_request`)."""

import json

import pytest
from django.test import Client
from google.protobuf import json_format
from google.rpc.status_pb2 import Status

from tests.otlp import JSON, PROTOBUF, export, new_trace_id, post, span

pytestmark = pytest.mark.django_db

BAD_HOST = "evil.example"
MESSAGE = "Host 请求头不是本服务允许的主机名（ALLOWED_HOSTS）"


@pytest.fixture(autouse=True)
def debug_off(settings):  # type: ignore[no-untyped-def]
    settings.DEBUG = False


def test_an_api_request_to_a_host_not_allowed_is_a_json_400_in_the_apis_error_shape(
    api,
) -> None:
    response = api.get("/api/cases", HTTP_HOST=BAD_HOST)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"success": False, "message": MESSAGE, "code": "disallowed_host"}


def test_an_unknown_api_path_at_a_host_not_allowed_is_the_same_json_400() -> None:
    response = Client().post("/api/nowhere", HTTP_HOST=BAD_HOST)

    assert response.status_code == 400
    assert response.json()["code"] == "disallowed_host"


def test_feedback_sent_to_a_host_not_allowed_is_a_400_in_the_feedback_contracts_shape(
    api,
) -> None:
    response = api.post(
        "/api/feedback",
        {"sessionId": "h-1", "feedback": "useful"},
        format="json",
        HTTP_HOST=BAD_HOST,
    )

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"success": False, "message": MESSAGE, "caseId": None}


@pytest.mark.parametrize("content_type", [JSON, PROTOBUF], ids=["json", "protobuf"])
def test_spans_sent_to_a_host_not_allowed_get_an_otlp_400_in_the_requests_encoding(
    api, content_type
) -> None:
    run = export(span("agent", trace_id=new_trace_id()))
    body = json_format.MessageToJson(run).encode() if content_type == JSON else run

    response = post(Client(), body, key=api.raw_key, content_type=content_type, HTTP_HOST=BAD_HOST)

    assert response.status_code == 400
    assert response["Content-Type"] == content_type
    if content_type == JSON:
        status = json_format.Parse(response.content, Status())
    else:
        status = Status.FromString(response.content)
    assert (status.code, status.message) == (3, MESSAGE)  # INVALID_ARGUMENT: not retried


def test_another_request_django_refuses_on_the_api_is_a_json_400_too(api, settings) -> None:
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 2

    response = api.get("/api/cases?limit=5&cursor=x&extra=1")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"success": False, "message": "请求无效", "code": "bad_request"}


def test_an_admin_page_at_a_host_not_allowed_keeps_an_html_400(admin_client) -> None:
    response = admin_client.get("/admin/", HTTP_HOST=BAD_HOST)

    assert response.status_code == 400
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert "<h1>请求无效</h1>" in response.content.decode()


@pytest.mark.parametrize("path", ["/api/cases", "/api/feedback", "/v1/traces"])
def test_a_host_not_allowed_on_the_api_is_logged_as_the_one_warning_it_was(
    json_lines, path
) -> None:
    assert Client().post(path, HTTP_HOST=BAD_HOST).status_code == 400

    entries = [json.loads(line) for line in json_lines]
    [refused] = [e for e in entries if e["logger"].startswith("django.")]
    assert (refused["logger"], refused["level"]) == ("django.security.DisallowedHost", "WARNING")
    assert BAD_HOST in refused["message"]
    assert "exception" not in refused
    assert [e for e in entries if e["level"] in ("ERROR", "CRITICAL")] == []
