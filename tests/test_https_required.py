"""With SECURE_SSL_REDIRECT on, a plain-HTTP request to a machine endpoint (/api/...,
/v1/traces) is refused with 403 in that endpoint's own error shape, writing nothing: a
301 is read as success by OTLP exporters and by `curl -f`, and a redirected POST loses
its body. The admin and the browser pages keep the redirect."""

import pytest
from django.test import Client
from google.protobuf import json_format
from google.rpc.status_pb2 import Status

from diagnosis.models import DiagnosisSession, Span
from tests.factories import DiagnosisSessionFactory
from tests.metrics_samples import scrape, value
from tests.otlp import JSON, export, new_span_id, new_trace_id, otlp_json, post, span

pytestmark = pytest.mark.django_db

PERMISSION_DENIED = 7  # google.rpc.Code


@pytest.fixture(autouse=True)
def production_redirect(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SECURE_SSL_REDIRECT = True


def one_span():  # type: ignore[no-untyped-def]
    return export(
        span("agent", trace_id=new_trace_id(), span_id=new_span_id(), attributes={"a": "b"})
    )


def test_a_plain_http_post_to_the_api_is_refused_in_the_api_error_shape(api) -> None:
    response = api.post("/api/sessions", {"query": "disk full"}, format="json")

    assert response.status_code == 403
    body = response.json()
    assert body["success"] is False
    assert body["code"] == "https_required"
    assert "https://" in body["message"]
    assert set(body) == {"success", "message", "code"}
    assert not DiagnosisSession.objects.exists()


def test_a_plain_http_read_of_the_api_is_refused_too_not_redirected(api) -> None:
    DiagnosisSessionFactory(session_id="s-read")

    response = api.get("/api/sessions/s-read")

    assert response.status_code == 403
    assert response.json()["code"] == "https_required"


def test_feedback_is_refused_in_the_contract_shape(api) -> None:
    response = api.post("/api/feedback", {"sessionId": "s", "value": "useful"}, format="json")

    assert response.status_code == 403
    body = response.json()
    assert list(body) == ["success", "message", "caseId"]
    assert body["success"] is False
    assert "https://" in body["message"]


def test_a_plain_http_otlp_export_gets_a_403_status_in_protobuf(make_client) -> None:
    key = make_client("agent").raw_key

    response = post(Client(), one_span(), key=key)

    assert response.status_code == 403
    assert response["Content-Type"] == "application/x-protobuf"
    status = Status.FromString(response.content)
    assert status.code == PERMISSION_DENIED
    assert "https://" in status.message
    assert not Span.objects.exists()
    assert not DiagnosisSession.objects.exists()


def test_a_plain_http_otlp_json_export_gets_its_status_in_json(make_client) -> None:
    key = make_client("agent").raw_key
    document = otlp_json(one_span())

    response = Client().post(
        "/v1/traces", document, content_type=JSON, HTTP_AUTHORIZATION=f"Api-Key {key}"
    )

    assert response.status_code == 403
    assert response["Content-Type"] == JSON
    assert json_format.Parse(response.content, Status()).code == PERMISSION_DENIED
    assert not Span.objects.exists()


def test_the_admin_login_page_still_redirects_to_https(client) -> None:
    response = client.get("/admin/login/")

    assert response.status_code == 301
    assert response["Location"] == "https://testserver/admin/login/"


def test_the_api_docs_page_still_redirects_to_https(client) -> None:
    response = client.get("/api/docs")

    assert response.status_code == 301
    assert response["Location"].startswith("https://")


def test_behind_a_proxy_that_says_https_the_api_and_otlp_work(api, make_client, settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    key = make_client("agent").raw_key

    created = api.post(
        "/api/sessions", {"query": "disk full"}, format="json", HTTP_X_FORWARDED_PROTO="https"
    )
    exported = post(Client(), one_span(), key=key, HTTP_X_FORWARDED_PROTO="https")

    assert created.status_code == 201
    assert exported.status_code == 200
    assert Span.objects.count() == 1


def test_a_proxy_header_other_than_https_is_still_refused(api, settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    response = api.post(
        "/api/sessions", {"query": "disk full"}, format="json", HTTP_X_FORWARDED_PROTO="http"
    )

    assert response.status_code == 403
    assert not DiagnosisSession.objects.exists()


def test_a_path_exempt_from_the_redirect_is_served_over_plain_http(
    api, make_client, settings
) -> None:
    settings.SECURE_REDIRECT_EXEMPT = [r"^api/", r"^v1/traces$"]
    key = make_client("agent").raw_key

    created = api.post("/api/sessions", {"query": "disk full"}, format="json")
    exported = post(Client(), one_span(), key=key)

    assert created.status_code == 201
    assert exported.status_code == 200


def test_without_the_redirect_setting_plain_http_is_served(api, settings) -> None:
    settings.SECURE_SSL_REDIRECT = False

    response = api.post("/api/sessions", {"query": "disk full"}, format="json")

    assert response.status_code == 201


def test_the_refusals_count_under_the_route_asked_for(api, make_client) -> None:
    key = make_client("agent").raw_key
    api_labels = {"route": "session-list", "method": "POST", "status": "403"}
    otlp_labels = {"route": "otlp-traces", "method": "POST", "status": "403"}
    before = scrape()

    api.post("/api/sessions", {"query": "disk full"}, format="json")
    post(Client(), one_span(), key=key)

    after = scrape()
    for labels in (api_labels, otlp_labels):
        name = "diagnosis_http_requests_total"
        assert value(after, name, **labels) == value(before, name, **labels) + 1


def test_a_plain_http_otlp_export_to_the_path_with_a_trailing_slash_is_refused_too(
    make_client,
) -> None:
    key = make_client("agent").raw_key

    response = Client().post(
        "/v1/traces/",
        one_span().SerializeToString(),
        content_type="application/x-protobuf",
        HTTP_AUTHORIZATION=f"Api-Key {key}",
    )

    assert response.status_code == 403
    assert Status.FromString(response.content).code == PERMISSION_DENIED
    assert not Span.objects.exists()


@pytest.mark.parametrize(
    "path",
    ["/api/docs/", "/api/schema/", "/api/docs/oauth2-redirect", "/api/schema?format=json"],
)
def test_the_browser_pages_keep_the_redirect_with_a_trailing_slash_or_below_them(
    client, path: str
) -> None:
    response = client.get(path)

    assert response.status_code == 301
    assert response["Location"].startswith("https://testserver/api/")


@pytest.mark.parametrize("path", ["/api/docsx", "/api/schemas"])
def test_a_path_that_only_begins_like_a_browser_page_is_refused(client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 403
    assert response.json()["code"] == "https_required"


def test_the_api_root_without_its_slash_is_refused_not_redirected(client) -> None:
    response = client.get("/api")

    assert response.status_code == 403
    assert response.json()["code"] == "https_required"
