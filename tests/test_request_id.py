"""Every response carries an X-Request-ID (the one a reverse proxy sent, when it is sane,
else a new one), and every log line written while the request is handled names it."""

import contextvars
import json
import logging
import re

import pytest
from django.test import Client

from config.logging import JsonFormatter, PlainFormatter, SessionContextFilter, set_request_id
from tests.factories import DiagnosisSessionFactory
from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.test_outages import UNREACHABLE_CACHE

pytestmark = pytest.mark.django_db

GENERATED = re.compile(r"[0-9a-f]{32}")


def lines_of(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def test_a_response_carries_a_generated_request_id(client) -> None:
    response = client.get("/api/sessions/nope")

    assert GENERATED.fullmatch(response["X-Request-ID"])


def test_each_request_gets_its_own_generated_id(client) -> None:
    first = client.get("/api/sessions/nope")["X-Request-ID"]
    second = client.get("/api/sessions/nope")["X-Request-ID"]

    assert first != second


def test_a_sane_incoming_id_is_echoed_and_names_the_log_lines_of_its_request(
    api,
    json_lines,
) -> None:
    response = api.post(
        "/api/sessions",
        {"sessionId": "rid-1", "query": "q"},
        format="json",
        HTTP_X_REQUEST_ID="edge-7f3a.b_c:9-x",
    )

    assert response["X-Request-ID"] == "edge-7f3a.b_c:9-x"
    started = [entry for entry in lines_of(json_lines) if entry["message"] == "session started"]
    assert started and all(entry["request_id"] == "edge-7f3a.b_c:9-x" for entry in started)


def test_djangos_own_line_for_a_refused_request_names_it(api, json_lines) -> None:
    DiagnosisSessionFactory(session_id="done", status="FAILED")

    api.post(
        "/api/sessions/done/complete",
        {"status": "SUCCESS", "answer": "late"},
        format="json",
        HTTP_X_REQUEST_ID="req-42",
    )

    warnings = [entry for entry in lines_of(json_lines) if entry["logger"] == "django.request"]
    assert warnings and all(entry["request_id"] == "req-42" for entry in warnings)


@pytest.mark.parametrize(
    "incoming",
    ["a" * 129, "has space", "line\nbreak", "", "semi;colon", "ünïcode"],
    ids=["too-long", "space", "newline", "empty", "semicolon", "non-ascii"],
)
def test_an_insane_incoming_id_is_replaced_by_a_generated_one(client, incoming: str) -> None:
    response = client.get("/api/sessions/nope", HTTP_X_REQUEST_ID=incoming)

    assert GENERATED.fullmatch(response["X-Request-ID"])


def test_an_incoming_id_of_128_characters_is_kept(client) -> None:
    incoming = "A" * 128

    response = client.get("/api/sessions/nope", HTTP_X_REQUEST_ID=incoming)

    assert response["X-Request-ID"] == incoming


def test_a_503_outage_answer_carries_the_request_id(api, settings) -> None:
    DiagnosisSessionFactory(session_id="c-1")
    settings.CACHES = UNREACHABLE_CACHE

    response = api.get("/api/sessions/c-1", HTTP_X_REQUEST_ID="outage-1")

    assert response.status_code == 503
    assert response["X-Request-ID"] == "outage-1"


def test_an_otlp_answer_carries_the_request_id(make_client) -> None:
    key = make_client("agent").raw_key
    request = export(span("agent", trace_id=new_trace_id(), span_id=new_span_id()))

    response = post(Client(), request, key=key, HTTP_X_REQUEST_ID="otlp-1")

    assert response.status_code == 200
    assert response["X-Request-ID"] == "otlp-1"


def test_an_https_required_refusal_carries_the_request_id(api, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True

    response = api.post("/api/sessions", {"query": "q"}, format="json", HTTP_X_REQUEST_ID="h-1")

    assert response.status_code == 403
    assert response["X-Request-ID"] == "h-1"


def test_a_body_too_large_refusal_carries_the_request_id(api, settings) -> None:
    settings.API_MAX_BODY_BYTES = 10

    response = api.post(
        "/api/sessions", {"query": "q" * 50}, format="json", HTTP_X_REQUEST_ID="big-1"
    )

    assert response.status_code == 413
    assert response["X-Request-ID"] == "big-1"


def test_a_cross_origin_page_may_read_the_request_id(client, settings) -> None:
    settings.CORS_ALLOWED_ORIGINS = ["https://widget.example"]

    response = client.post(
        "/api/feedback",
        {},
        content_type="application/json",
        HTTP_ORIGIN="https://widget.example",
    )

    exposed = [h.strip().lower() for h in response["Access-Control-Expose-Headers"].split(",")]
    assert "x-request-id" in exposed
    assert response["X-Request-ID"]


def test_the_id_does_not_leak_into_the_next_requests_log_lines(api, json_lines) -> None:
    api.get("/api/sessions/nope", HTTP_X_REQUEST_ID="first-1")
    json_lines.clear()
    logging.getLogger("tests.request_id").info("between requests")

    response = api.post("/api/sessions", {"sessionId": "rid-2", "query": "q"}, format="json")

    entries = lines_of(json_lines)
    assert "request_id" not in entries[0]
    assert {entry.get("request_id") for entry in entries[1:]} == {response["X-Request-ID"]}


def test_a_line_outside_a_request_has_no_request_id(json_lines) -> None:
    logging.getLogger("tests.request_id").info("worker line")

    assert "request_id" not in json.loads(json_lines[-1])


def test_the_plain_format_writes_it_as_key_value() -> None:
    record = logging.LogRecord("x", logging.INFO, "", 0, "hello", None, None)

    def during_a_request() -> None:
        set_request_id("abc-1")
        SessionContextFilter().filter(record)

    contextvars.copy_context().run(during_a_request)

    assert PlainFormatter("%(message)s").format(record) == "hello request_id=abc-1"
    assert json.loads(JsonFormatter().format(record))["request_id"] == "abc-1"
