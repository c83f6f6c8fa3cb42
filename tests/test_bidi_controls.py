"""Bidirectional controls (U+202A-U+202E, U+2066-U+2069) reorder what a page shows: an
answer "Delete /var/log " + RLO + "yltnenamrep" reads "Delete /var/log permanently". Every
free text is stored without them, whichever way it comes in (the REST API, OTLP, a case
file, the admin's case form), so the admin shows what is stored; the direction marks
LRM and RLM are kept; identifiers are not rewritten. A history entry written around a
title stored earlier with such a control keeps its words in order."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from caselibrary.case_files import read_jsonl
from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from diagnosis.text import isolated, without_bidi_controls
from feedback.models import FeedbackEntry
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory
from tests.near_duplicates import flag_near_duplicates
from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
PDF = "\u202c"  # POP DIRECTIONAL FORMATTING
CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
LRM, RLM = "\u200e", "\u200f"


def holds_no_control(text: str | None) -> bool:
    return not any(char in CONTROLS for char in text or "")


def test_every_embedding_override_and_isolate_control_is_taken_out_and_the_marks_kept() -> None:
    assert without_bidi_controls(f"a{CONTROLS}b{LRM}c{RLM}d") == f"ab{LRM}c{RLM}d"


# --- The REST API -------------------------------------------------------------------


def test_a_session_is_stored_without_controls_and_its_admin_page_shows_what_is_stored(
    api, admin_client
) -> None:
    started = api.post(
        "/api/sessions",
        {
            "sessionId": "bidi-1",
            "query": f"{RLO}?kcab ti seod {LRM}who",
            "userId": f"ops{RLO}nimda",
        },
        format="json",
    )
    completed = api.post(
        "/api/sessions/bidi-1/complete",
        {"status": "SUCCESS", "answer": f"Delete /var/log {RLO}yltnenamrep{PDF}\n"},
        format="json",
    )

    assert (started.status_code, completed.status_code) == (201, 200)
    session = DiagnosisSession.objects.get(session_id="bidi-1")
    assert session.user_id == "opsnimda"
    assert session.query == f"?kcab ti seod {LRM}who"
    assert session.answer == "Delete /var/log yltnenamrep\n"
    page = admin_client.get(
        reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])
    ).content.decode()
    assert "Delete /var/log yltnenamrep" in page
    assert "opsnimda" in page
    assert holds_no_control(page)


def test_a_control_alone_is_no_answer(api) -> None:
    api.post("/api/sessions", {"sessionId": "bidi-2", "query": "q"}, format="json")

    response = api.post(
        "/api/sessions/bidi-2/complete", {"status": "SUCCESS", "answer": f" {RLO} "}, format="json"
    )

    assert response.status_code == 400
    assert "answer" in response.json()["errors"]


def test_a_tool_call_is_stored_without_controls_and_its_invocation_id_as_sent(api) -> None:
    api.post("/api/sessions", {"sessionId": "bidi-3", "query": "q"}, format="json")

    response = api.post(
        "/api/sessions/bidi-3/tool-invocations",
        {
            "invocationId": "call-1",
            "toolName": f"search{RLO}_docs",
            "status": "FAILED",
            "query": f"disk {RLO}lluf",
            "errorMessage": f"{RLO}tuoemit ",
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    call = ToolInvocation.objects.get()
    assert (call.invocation_id, call.tool_name, call.query, call.error_message) == (
        "call-1",
        "search_docs",
        "disk lluf",
        "tuoemit",
    )


def test_a_session_id_holding_a_control_is_still_refused(api) -> None:
    response = api.post("/api/sessions", {"sessionId": f"ops{RLO}1", "query": "q"}, format="json")

    assert response.status_code == 400
    assert not DiagnosisSession.objects.exists()


def test_a_readers_correction_and_comment_are_stored_without_controls(api) -> None:
    DiagnosisSessionFactory(session_id="bidi-4", succeeded=True)

    response = api.post(
        "/api/feedback",
        {
            "sessionId": "bidi-4",
            "feedback": "not_useful",
            "comment": f"{RLO}gnorw",
            "correction": f"run {RLO}/ fr- mr",
        },
        format="json",
    )

    assert response.status_code == 200, response.content
    entry = FeedbackEntry.objects.get()
    assert (entry.comment, entry.correction) == ("gnorw", "run / fr- mr")


def test_a_case_from_the_api_is_stored_without_controls(api) -> None:
    response = api.post(
        "/api/cases",
        {
            "title": f"Disk full on db-3{RLO}",
            "rootCause": f"binlogs {RLO}degrup ton",
            "solution": f"{LRM}purge binlogs{RLO}",
            "errorCode": f"ERR{RLO}28",
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    case = CaseLibrary.objects.get()
    assert (case.title, case.root_cause, case.solution, case.error_code) == (
        "Disk full on db-3",
        "binlogs degrup ton",
        f"{LRM}purge binlogs",
        "ERR28",
    )


def test_a_case_title_of_controls_alone_is_refused(api) -> None:
    response = api.post(
        "/api/cases", {"title": RLO * 3, "rootCause": "r", "solution": "s"}, format="json"
    )

    assert response.status_code == 400
    assert "title" in response.json()["errors"]


def test_a_case_read_from_a_file_is_kept_without_controls() -> None:
    line = (
        f'{{"title": "Disk full{RLO}", "rootCause": "{RLO}binlogs", '
        f'"solution": "purge{RLO}", "createdBy": "ops{RLO}"}}'
    )

    records, problems = read_jsonl(line, "cases.jsonl")

    assert not problems
    assert (records[0].title, records[0].root_cause, records[0].solution) == (
        "Disk full",
        "binlogs",
        "purge",
    )
    assert records[0].created_by == "ops"


def test_a_case_written_in_the_admin_is_stored_without_controls(admin_client) -> None:
    response = admin_client.post(
        "/admin/caselibrary/caselibrary/add/",
        {
            "diagnosis": "",
            "title": f"Disk full on db-3{RLO}",
            "fault_category": "CAPACITY",
            "error_code": "",
            "root_cause": f"{RLO}sgolnib",
            "solution": "purge binlogs",
        },
    )

    assert response.status_code == 302
    case = CaseLibrary.objects.get()
    assert (case.title, case.root_cause) == ("Disk full on db-3", "sgolnib")


# --- OTLP ---------------------------------------------------------------------------


def test_a_span_is_stored_without_controls(client, key) -> None:
    trace, root = new_trace_id(), new_span_id()
    tool = span(
        f"execute_tool search{RLO}_docs",
        trace_id=trace,
        parent=root,
        attributes={"gen_ai.operation.name": "execute_tool", "input.value": f"disk {RLO}lluf"},
        error=f"{RLO}tuoemit",
    )
    agent = span(
        "invoke_agent",
        trace_id=trace,
        span_id=root,
        attributes={
            "session.id": "bidi-otlp",
            "user.id": f"ops{RLO}nimda",
            "input.value": f"{RLO}?kcab ti seod",
            "output.value": f"Delete /var/log {RLO}yltnenamrep",
        },
    )

    response = post(client, export(tool, agent), key=key)

    assert response.status_code == 200, response.content
    session = DiagnosisSession.objects.get(session_id="bidi-otlp")
    assert (session.user_id, session.query, session.answer) == (
        "opsnimda",
        "?kcab ti seod",
        "Delete /var/log yltnenamrep",
    )
    call = ToolInvocation.objects.get()
    assert (call.tool_name, call.query, call.error_message) == (
        "search_docs",
        "disk lluf",
        "tuoemit",
    )
    for stored in Span.objects.all():
        assert holds_no_control(stored.name)
        assert holds_no_control(stored.error_message)
        assert holds_no_control(str(stored.attributes))


# --- Messages written around a stored text -------------------------------------------


def test_an_isolated_text_is_closed_before_the_words_after_it() -> None:
    assert isolated(f"Disk full{RLO}") == "\u2068Disk full\u2069"


def test_the_merge_history_names_the_kept_case_after_a_title_stored_with_an_override(
    admin_client,
) -> None:
    kept = CaseLibraryFactory(title="Disk full on db-3")
    merged = CaseLibraryFactory(title="Disk full on db-3 again")
    # As an earlier release could have stored it, written past today's input rules.
    CaseLibrary.objects.filter(pk=kept.pk).update(title=f"Disk full on db-3{RLO}")
    flag_near_duplicates(merged, kept)

    admin_client.post(f"/admin/caselibrary/caselibrary/{merged.pk}/merge/{kept.pk}/")

    message = LogEntry.objects.get(object_id=str(merged.pk)).change_message
    assert RLO not in message
    assert message.index(str(kept.pk)) > message.index("\u2069")
