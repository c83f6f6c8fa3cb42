"""X-Request-ID on every answer, those given before the API's middleware runs included:
the probes (/healthz, /readyz), the /metrics scrape and a browser's CORS preflight; their
log lines name it; a page may send its own; and docs/api.md and the OpenAPI schema say what
the service does with it."""

import json
import re
import string

import pytest
import yaml
from django.test import Client
from rest_framework.test import APIClient

from config import health
from tests.metrics_samples import scrape, value
from tests.processes import ROOT

pytestmark = pytest.mark.django_db

PAGE = "https://chat.example.com"
GENERATED = re.compile(r"[0-9a-f]{32}")
API_DOC = ROOT / "docs" / "api.md"
DOC_SECTION = "## Request ids"


@pytest.fixture(autouse=True)
def _a_process_not_probed_yet(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(health, "_failing", frozenset())


def preflight(**extra: str):  # type: ignore[no-untyped-def]
    return Client().options(
        "/api/feedback",
        HTTP_ORIGIN=PAGE,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type, x-request-id",
        **extra,
    )


ANSWERED_EARLY = {
    "healthz": lambda **extra: Client().get("/healthz", **extra),
    "readyz": lambda **extra: Client().get("/readyz", **extra),
    "metrics": lambda **extra: Client().get("/metrics", REMOTE_ADDR="127.0.0.1", **extra),
    "preflight": preflight,
}


@pytest.fixture
def allowed_page(settings):  # type: ignore[no-untyped-def]
    settings.CORS_ALLOWED_ORIGINS = [PAGE]


@pytest.mark.usefixtures("allowed_page")
@pytest.mark.parametrize("ask", ANSWERED_EARLY.values(), ids=ANSWERED_EARLY.keys())
def test_an_answer_given_before_the_api_s_middleware_carries_a_generated_request_id(ask) -> None:
    response = ask()

    assert response.status_code in (200, 503)
    assert GENERATED.fullmatch(response["X-Request-ID"])


@pytest.mark.usefixtures("allowed_page")
@pytest.mark.parametrize("ask", ANSWERED_EARLY.values(), ids=ANSWERED_EARLY.keys())
def test_an_answer_given_before_the_api_s_middleware_echoes_a_sane_sent_id(ask) -> None:
    response = ask(HTTP_X_REQUEST_ID="lb-probe.7:a_b-c")

    assert response["X-Request-ID"] == "lb-probe.7:a_b-c"


@pytest.mark.usefixtures("allowed_page")
@pytest.mark.parametrize("ask", ANSWERED_EARLY.values(), ids=ANSWERED_EARLY.keys())
def test_an_answer_given_before_the_api_s_middleware_replaces_an_insane_sent_id(ask) -> None:
    response = ask(HTTP_X_REQUEST_ID="two words")

    assert GENERATED.fullmatch(response["X-Request-ID"])


def test_healthz_still_answers_without_a_query_a_session_or_a_cookie(
    client, django_assert_num_queries
) -> None:
    with django_assert_num_queries(0):
        response = client.get("/healthz", HTTP_X_REQUEST_ID="lb-1")

    assert response.status_code == 200
    assert response["X-Request-ID"] == "lb-1"
    assert not response.cookies
    assert "Cookie" not in response.get("Vary", "")


def test_a_not_ready_probe_s_warning_names_its_request_id(settings, json_lines) -> None:
    settings.READYZ_WORKER_MAX_AGE = 180  # no worker has beaten yet: not ready

    response = Client().get("/readyz", HTTP_X_REQUEST_ID="probe-503")

    assert response.status_code == 503
    assert response["X-Request-ID"] == "probe-503"
    entries = [json.loads(line) for line in json_lines]
    readiness = [entry for entry in entries if entry["message"].startswith("readiness")]
    assert readiness and all(entry["request_id"] == "probe-503" for entry in readiness)


def test_a_refused_scrape_carries_its_request_id_and_django_s_line_names_it(json_lines) -> None:
    response = Client().get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_X_REQUEST_ID="scrape-9")

    assert response.status_code == 403
    assert response["X-Request-ID"] == "scrape-9"
    entries = [json.loads(line) for line in json_lines]
    refused = [entry for entry in entries if entry["logger"] == "django.request"]
    assert refused and all(entry["request_id"] == "scrape-9" for entry in refused)


@pytest.mark.usefixtures("allowed_page")
def test_a_preflight_allows_a_page_to_send_its_own_request_id() -> None:
    response = preflight()

    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == PAGE
    allowed = {h.strip() for h in response["Access-Control-Allow-Headers"].lower().split(",")}
    assert {"x-request-id", "authorization", "content-type", "accept", "accept-language"} <= allowed


@pytest.mark.usefixtures("allowed_page")
def test_a_page_s_own_request_id_comes_back_readable_on_its_feedback_answer() -> None:
    response = Client().post(
        "/api/feedback",
        {},
        content_type="application/json",
        HTTP_ORIGIN=PAGE,
        HTTP_X_REQUEST_ID="page-77",
    )

    assert response.status_code == 401  # neither a token nor a key
    assert response["X-Request-ID"] == "page-77"
    exposed = {h.strip().lower() for h in response["Access-Control-Expose-Headers"].split(",")}
    assert {"x-request-id", "retry-after"} <= exposed


@pytest.mark.usefixtures("allowed_page")
def test_a_preflight_is_still_counted_under_its_route() -> None:
    labels = {"route": "feedback-list", "method": "OPTIONS", "status": "200"}
    before = value(scrape(), "diagnosis_http_requests_total", **labels)

    preflight()

    assert value(scrape(), "diagnosis_http_requests_total", **labels) == before + 1


# --- What docs/api.md and the schema say, held to what the service does -----------------


def doc_rule() -> re.Pattern[str]:
    """The sane id as docs/api.md writes it ("1 to 128 of `A-Za-z0-9._:-`"), as a regex."""
    text = API_DOC.read_text(encoding="utf-8")
    assert text.count(DOC_SECTION) == 1, f"{API_DOC.name}: expected one section {DOC_SECTION!r}"
    section = text.split(DOC_SECTION, 1)[1].split("\n#", 1)[0]
    found = re.findall(r"1 to (\d+) of `([^`]+)`", section)
    assert len(found) == 1, f"{API_DOC.name}: expected one rule for a sane id, found {found}"
    ((longest, characters),) = found
    return re.compile(f"[{characters}]{{1,{longest}}}")


# Every printable ASCII character between two that are allowed, and the lengths either
# side of the limit.
PROBES = [f"a{c}b" for c in string.printable if c not in "\r\n"] + [
    "",
    "é",
    "Z" * 127,
    "Z" * 128,
    "Z" * 129,
    "a\tb",
]


def test_the_api_doc_s_rule_for_a_sane_id_is_the_one_the_service_applies() -> None:
    rule = doc_rule()

    for probe in PROBES:
        echoed = Client().get("/healthz", HTTP_X_REQUEST_ID=probe)["X-Request-ID"] == probe
        assert echoed == bool(rule.fullmatch(probe)), repr(probe)


def test_the_api_doc_says_every_response_carries_it_and_the_log_lines_name_it() -> None:
    section = API_DOC.read_text(encoding="utf-8").split(DOC_SECTION, 1)[1].split("\n#", 1)[0]

    for named in ("`X-Request-ID`", "`/healthz`", "`/readyz`", "`/metrics`", "`request_id`"):
        assert named in section, named


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def operations(schema: dict) -> list[tuple[str, str, dict]]:
    return [
        (path, method, operation)
        for path, ops in schema["paths"].items()
        for method, operation in ops.items()
        if method != "parameters"
    ]


def test_the_schema_declares_the_header_on_every_response_of_every_operation(schema) -> None:
    assert operations(schema)
    for path, method, operation in operations(schema):
        for status, response in operation["responses"].items():
            header = response["headers"]["X-Request-ID"]
            assert header["required"] is True, (method, path, status)
            assert header["schema"]["type"] == "string"


def test_the_schema_declares_the_request_header_as_optional(schema) -> None:
    for path, method, operation in operations(schema):
        [parameter] = [
            p
            for p in operation.get("parameters", [])
            if p["in"] == "header" and p["name"] == "X-Request-ID"
        ]
        assert parameter["required"] is False, (method, path)


def test_the_schema_s_pattern_for_the_header_is_the_one_the_service_applies(schema) -> None:
    patterns = {
        response["headers"]["X-Request-ID"]["schema"]["pattern"]
        for _, _, operation in operations(schema)
        for response in operation["responses"].values()
    }
    [pattern] = patterns

    for probe in PROBES:
        served = Client().get("/healthz", HTTP_X_REQUEST_ID=probe)["X-Request-ID"]
        assert (served == probe) == bool(re.search(pattern, probe)), repr(probe)
        assert re.search(pattern, served), repr(served)  # a new id matches it too


def test_an_api_answer_carries_the_id_the_schema_documents(schema, api) -> None:
    response = api.get("/api/sessions/nope", HTTP_X_REQUEST_ID="agent-run-5")
    documented = schema["paths"]["/api/sessions/{sessionId}"]["get"]["responses"]["404"]

    assert response.status_code == 404
    assert re.search(documented["headers"]["X-Request-ID"]["schema"]["pattern"], "agent-run-5")
    assert response["X-Request-ID"] == "agent-run-5"
