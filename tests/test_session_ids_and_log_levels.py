"""A session id may not be `.` or `..` where a session is created (a URL cannot name
them), while `...` and longer runs of dots are ordinary ids; /api/feedback looks any
well-formed id up. Lines about the client's own mistakes, and about normal events, are not
logged as problems."""

import json
import logging
import re

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import translation
from rest_framework.exceptions import ValidationError as ApiValidationError

from config import health
from diagnosis import services
from diagnosis.facts_rules import SESSION_ID_INVALID
from diagnosis.models import SESSION_ID_PATTERN, SESSION_ID_SCHEMA_PATTERN, DiagnosisSession
from evaluation.services import session_evaluate
from feedback.body import FEEDBACK_BODY_SCHEMA
from tests.factories import DiagnosisSessionFactory
from tests.otlp import export, kb_tool, new_span_id, new_trace_id, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

# The dot-segments of RFC 3986: clients and proxies resolve them away in a path.
DOT_SEGMENTS = [".", ".."]
# Other runs of dots, and dots among other characters, are ordinary path segments.
DOTS_ONLY_BUT_ORDINARY = ["...", "....", "." * 64]
WITH_DOTS = ["a.b", ".a", "a.", "..x", "1.2.3", "...-", "v1..2"]
NOT_FOUND = {"success": False, "message": "会话不存在", "caseId": None}


# --- Session ids of dots ------------------------------------------------------------------


@pytest.mark.parametrize("session_id", DOT_SEGMENTS)
def test_starting_a_session_named_dot_or_dot_dot_is_a_400_that_says_so_and_writes_nothing(
    make_client, session_id
) -> None:
    response = make_client("full").post(
        "/api/sessions", {"sessionId": session_id, "query": "q"}, format="json"
    )

    assert response.status_code == 400, response.content
    assert response.json()["errors"] == {"sessionId": [SESSION_ID_INVALID]}
    assert SESSION_ID_INVALID == (
        'A sessionId is 1-64 characters of A-Z a-z 0-9 . _ : -, not "." or "..".'
    )
    assert not DiagnosisSession.objects.exists()


@pytest.mark.parametrize("session_id", DOTS_ONLY_BUT_ORDINARY)
def test_three_dots_or_more_are_a_valid_new_session_id_read_back_at_its_url(
    make_client, session_id
) -> None:
    api = make_client("full")

    created = api.post("/api/sessions", {"sessionId": session_id, "query": "q"}, format="json")
    read = api.get(f"/api/sessions/{session_id}")

    assert created.status_code == 201, created.content
    assert read.status_code == 200, read.content
    assert read.json()["sessionId"] == session_id


def test_ids_with_dots_among_other_characters_are_still_accepted(make_client) -> None:
    api = make_client("full")

    statuses = [
        api.post("/api/sessions", {"sessionId": sid, "query": "q"}, format="json").status_code
        for sid in WITH_DOTS
    ]

    assert statuses == [201] * len(WITH_DOTS)
    assert api.get("/api/sessions/..x").json()["sessionId"] == "..x"


def test_an_in_process_caller_cannot_start_a_session_named_dot_dot() -> None:
    with pytest.raises(ApiValidationError) as refused:
        services.session_start(session_id="..", query="q")

    assert list(refused.value.detail) == ["session_id"]
    assert not DiagnosisSession.objects.exists()


@pytest.mark.parametrize("session_id", DOT_SEGMENTS)
def test_the_model_field_refuses_dot_and_dot_dot_in_their_own_words(session_id) -> None:
    with pytest.raises(ValidationError) as refused:
        DiagnosisSession(session_id=session_id, query="q").full_clean()

    [error] = refused.value.error_dict["session_id"]
    assert error.code == "invalid_session_id"
    with translation.override("en"):
        assert error.messages == [
            'A sessionId is 1-64 characters of A-Z a-z 0-9 . _ : -, not "." or ".."'
        ]
    with translation.override("zh-hans"):
        assert error.messages == [
            "sessionId 为 1-64 个字符，只能包含 A-Z a-z 0-9 . _ : -，且不能是 . 或 .."
        ]


def test_the_model_field_takes_three_dots_as_an_id() -> None:
    DiagnosisSession(session_id="...", query="q").full_clean()


def test_the_schema_pattern_says_what_the_rule_says() -> None:
    # ECMA-262 and Python read this pattern alike for ids without a line break.
    schema = re.compile(SESSION_ID_SCHEMA_PATTERN)
    samples = [*DOT_SEGMENTS, *DOTS_ONLY_BUT_ORDINARY, *WITH_DOTS, "", "a" * 64, "a" * 65]
    samples += ["." * 65, "a b", "ticket#1"]

    assert [bool(schema.search(s)) for s in samples] == [
        bool(SESSION_ID_PATTERN.match(s)) for s in samples
    ]
    assert [bool(SESSION_ID_PATTERN.match(s)) for s in DOT_SEGMENTS] == [False, False]
    assert all(SESSION_ID_PATTERN.match(s) for s in DOTS_ONLY_BUT_ORDINARY)


@pytest.mark.parametrize("session_id", [*DOT_SEGMENTS, "..."])
def test_feedback_on_an_unknown_session_of_dots_is_a_404_like_any_unknown_session(
    api, session_id
) -> None:
    response = api.post(
        "/api/feedback", {"sessionId": session_id, "feedback": "useful"}, format="json"
    )

    assert response.status_code == 404, response.content
    assert response.json() == NOT_FOUND


def test_the_feedback_body_schema_takes_dots_alone_as_a_session_id() -> None:
    field = FEEDBACK_BODY_SCHEMA["properties"]["sessionId"]
    pattern = re.compile(field["pattern"])

    assert [bool(pattern.search(s)) for s in [*DOT_SEGMENTS, "...", "a b", "a" * 65]] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert field["description"] == "1-64 characters of A-Z a-z 0-9 . _ : -"


def test_feedback_on_an_adopted_session_stored_as_dot_dot_is_recorded(api) -> None:
    # Adopted from the original database: stored as it was, never through the API.
    DiagnosisSessionFactory(session_id="..", succeeded=True)

    response = api.post("/api/feedback", {"sessionId": "..", "feedback": "useful"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["message"] == "反馈已记录"
    assert DiagnosisSession.objects.get(session_id="..").feedback == "useful"


def agent_run(session_id: str):  # type: ignore[no-untyped-def]
    """An agent's trace (its span and a tool call) whose session.id is `session_id`."""
    trace_id, root = new_trace_id(), new_span_id()
    agent = span(
        "invoke_agent",
        trace_id=trace_id,
        span_id=root,
        attributes={
            "session.id": session_id,
            "input.value": "磁盘满了",
            "output.value": "清理日志",
        },
    )
    return trace_id, export(agent, kb_tool(trace_id, root))


def test_an_otlp_session_id_of_dot_dot_is_ignored_for_the_trace_id_and_says_why(
    client, key
) -> None:
    trace_id, run = agent_run("..")

    response = post(client, run, key=key)

    assert response.status_code == 200, response.content
    partial = response_of(response).partial_success
    assert partial.rejected_spans == 0
    assert "'..'" in partial.error_message
    assert "且不能是 . 或 .." in partial.error_message
    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status) == (trace_id.hex(), "SUCCESS")


def test_an_otlp_session_id_of_three_dots_names_the_session(client, key) -> None:
    _trace_id, run = agent_run("...")

    response = post(client, run, key=key)

    assert response.status_code == 200, response.content
    assert response_of(response).partial_success.error_message == ""
    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status) == ("...", "SUCCESS")


# --- Log lines ----------------------------------------------------------------------------


def test_the_log_line_of_a_duplicate_session_names_the_session(make_client, json_lines) -> None:
    api = make_client("full")
    api.post("/api/sessions", {"sessionId": "dup-1", "query": "first"}, format="json")

    response = api.post("/api/sessions", {"sessionId": "dup-1", "query": "again"}, format="json")

    assert response.status_code == 409
    [conflict] = [entry for entry in map(json.loads, json_lines) if entry.get("status_code") == 409]
    assert conflict["message"] == "Conflict: /api/sessions"
    assert conflict["session_id"] == "dup-1"


def test_scoring_a_session_that_is_gone_is_an_info_line_not_a_warning(caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="evaluation"):
        assert session_evaluate(session_id="moved-away") is None

    [line] = [r for r in caplog.records if r.name == "evaluation.services"]
    assert (line.levelname, line.getMessage()) == (
        "INFO",
        "scoring skipped: session no longer exists (moved or deleted)",
    )
    assert line.session_id == "moved-away"


def test_a_host_not_allowed_is_a_400_and_a_warning_not_an_error(json_lines) -> None:
    assert Client().get("/api/sessions", HTTP_HOST="evil.example").status_code == 400

    entries = [json.loads(line) for line in json_lines]
    [security] = [e for e in entries if e["logger"] == "django.security.DisallowedHost"]
    assert security["level"] == "WARNING"
    assert "evil.example" in security["message"]
    assert [e for e in entries if e["level"] in ("ERROR", "CRITICAL")] == []


def test_a_host_not_allowed_is_not_written_where_only_errors_are_logged(json_lines) -> None:
    django_logger = logging.getLogger("django")
    previous = django_logger.level
    django_logger.setLevel(logging.ERROR)
    try:
        assert Client().get("/api/sessions", HTTP_HOST="evil.example").status_code == 400
    finally:
        django_logger.setLevel(previous)

    assert [line for line in json_lines if "django.security" in line] == []


# --- Readiness ----------------------------------------------------------------------------


def test_a_check_that_says_not_checked_makes_the_node_not_ready(monkeypatch) -> None:
    monkeypatch.setattr(health, "_migrations_applied", True)

    ready, checks = health.readiness(extra={"search": lambda: "not checked"})

    assert ready is False
    assert checks["search"] == "not checked"


@pytest.mark.usefixtures("admin_in_english")
def test_an_adopted_session_named_dot_dot_is_found_by_its_id_in_the_admin(admin_client) -> None:
    DiagnosisSession.objects.create(session_id="..", query="磁盘满了", status="SUCCESS")
    DiagnosisSessionFactory(query="别的问题")

    found = admin_client.get("/admin/diagnosis/diagnosissession/", {"q": ".."})
    calls = admin_client.get("/admin/diagnosis/toolinvocation/", {"session": ".."})

    assert [s.session_id for s in found.context["cl"].result_list] == [".."]
    assert "Tool invocations of session .." in calls.content.decode()
