"""POST /v1/traces: which session a trace's spans go to when its session id attribute is
unusable, and when a session whose first spans came under the trace id was created."""

import logging
from datetime import timedelta

import pytest
from django.test import Client

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from tests.otlp import (
    export,
    kb_tool,
    new_span_id,
    new_trace_id,
    post,
    response_of,
    span,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


def a_root(trace_id: bytes, span_id: bytes, session_id: str | None):  # type: ignore[no-untyped-def]
    named = {"session.id": session_id} if session_id else {}
    return span(
        "invoke_agent",
        trace_id=trace_id,
        span_id=span_id,
        attributes={**named, "input.value": "磁盘满了怎么办", "output.value": "清理日志"},
    )


# --- An invalid session id ---------------------------------------------------------------


def test_a_root_with_an_invalid_session_id_completes_a_session_under_the_trace_id(
    client, key, caplog
):
    trace_id, root = new_trace_id(), new_span_id()

    with caplog.at_level(logging.WARNING, logger="diagnosis"):
        response = post(
            client,
            export(a_root(trace_id, root, "ticket#4711"), kb_tool(trace_id, root)),
            key=key,
        )

    assert response.status_code == 200, response.content
    partial = response_of(response).partial_success
    assert partial.rejected_spans == 0
    assert "ticket#4711" in partial.error_message
    assert trace_id.hex() in partial.error_message
    session = DiagnosisSession.objects.get()
    assert session.session_id == trace_id.hex()
    assert (session.status, session.query, session.answer) == (
        "SUCCESS",
        "磁盘满了怎么办",
        "清理日志",
    )
    assert session.self_evaluation["evidence_score"] == 65
    assert Span.objects.filter(session=session).count() == 2
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [getattr(r, "span_id", None) for r in warnings] == [root.hex()]


def test_later_spans_of_a_trace_whose_session_id_was_invalid_join_its_completed_session(
    client, key
):
    trace_id, root = new_trace_id(), new_span_id()
    post(client, export(a_root(trace_id, root, "ticket#4711")), key=key)

    response = post(
        client, export(kb_tool(trace_id, root, **{"session.id": "ticket#4711"})), key=key
    )

    assert response_of(response).partial_success.rejected_spans == 0
    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status) == (trace_id.hex(), "SUCCESS")
    assert ToolInvocation.objects.get().session_id == trace_id.hex()
    assert session.self_evaluation["evidence_score"] == 65


def test_a_valid_session_id_on_another_span_of_the_trace_wins_over_an_invalid_one(client, key):
    trace_id, root = new_trace_id(), new_span_id()

    response = post(
        client,
        export(
            a_root(trace_id, root, "ticket#4711"), kb_tool(trace_id, root, **{"session.id": "t-1"})
        ),
        key=key,
    )

    assert "ticket#4711" in response_of(response).partial_success.error_message
    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status) == ("t-1", "SUCCESS")


# --- createdAt ------------------------------------------------------------------------------


def test_a_session_whose_first_spans_came_under_the_trace_id_keeps_their_arrival_as_created(
    client, key
):
    trace_id, root = new_trace_id(), new_span_id()
    post(client, export(kb_tool(trace_id, root)), key=key)  # no session id yet: the trace id
    # As if the root arrived an hour later (the exporter's next batch, a slow run).
    earlier = DiagnosisSession.objects.get().created_at - timedelta(hours=1)
    DiagnosisSession.objects.update(created_at=earlier)

    post(client, export(a_root(trace_id, root, "ticket-9")), key=key)

    session = DiagnosisSession.objects.get()
    assert session.session_id == "ticket-9"
    assert session.created_at == earlier
    assert session.status == "SUCCESS"


def test_a_session_created_before_its_trace_id_placeholder_keeps_its_own_creation(client, key, api):
    api.post("/api/sessions", {"sessionId": "otel-5", "query": "报表报错"}, format="json")
    started = DiagnosisSession.objects.get().created_at - timedelta(hours=2)
    DiagnosisSession.objects.update(created_at=started)
    trace_id, root = new_trace_id(), new_span_id()
    post(client, export(kb_tool(trace_id, root)), key=key)

    post(client, export(a_root(trace_id, root, "otel-5")), key=key)

    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.created_at) == ("otel-5", started)


# --- The chat page's feedback token -------------------------------------------------------


def test_the_agents_back_end_reads_an_otlp_sessions_feedback_token_with_its_key(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    post(client, export(a_root(trace_id, root, "chat-1"), kb_tool(trace_id, root)), key=key)
    back_end = Client(HTTP_AUTHORIZATION=f"Api-Key {key}")

    token = back_end.get("/api/sessions/chat-1").json()["feedbackToken"]
    rated = Client().post(
        "/api/feedback",
        {"sessionId": "chat-1", "feedback": "useful"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Feedback {token}",
    )

    assert rated.status_code == 200, rated.content
    assert DiagnosisSession.objects.get().feedback == "useful"
