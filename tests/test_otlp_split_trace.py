"""A trace that two requests committed at once split: one stored a span under the trace
id (no session named yet) while the other, naming the session, looked for that
placeholder before it was committed and found none. Each request of /v1/traces looks
again once committed (`placeholders_joined`), so the later of the two joins the halves.
SQLite runs one writer at a time and cannot interleave two requests: these tests build
what the pair leaves committed (the placeholder's half through the endpoint, the named
half as the other request stores it) and run the check the later one runs."""

from datetime import timedelta

import pytest
from django.utils import timezone

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from diagnosis.otlp_placeholders import placeholders_joined
from tests.factories import DiagnosisSessionFactory
from tests.otlp import (
    export,
    kb_tool,
    new_span_id,
    new_trace_id,
    post,
    span,
    stored_as_another_request_left_it,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

ANSWER = "payment-gateway 连接池耗尽：扩容。"


def stored_as_the_other_request_left_it(session: DiagnosisSession, trace: bytes, span_id: bytes):  # type: ignore[no-untyped-def]
    """The named half: a span the other request stored in the named session."""
    now = timezone.now()
    return Span.objects.create(
        session=session,
        trace_id=trace.hex(),
        span_id=span_id.hex(),
        name="invoke_agent ops",
        role="agent",
        started_at=now - timedelta(seconds=1),
        ended_at=now,
        attributes={"session.id": session.session_id, "output.value": ANSWER},
    )


def test_a_tool_span_left_under_the_trace_id_joins_the_completed_named_session(client, key):
    trace, root = new_trace_id(), new_span_id()
    post(client, export(kb_tool(trace, root)), key=key)  # no session named: the trace id
    named = DiagnosisSessionFactory(session_id="split-1", succeeded=True, answer=ANSWER)
    stored_as_the_other_request_left_it(named, trace, root)
    assert DiagnosisSession.objects.count() == 2

    joined = placeholders_joined({trace.hex()})

    assert joined == {"split-1"}
    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.answer) == ("split-1", "SUCCESS", ANSWER)
    assert ToolInvocation.objects.get().session_id == "split-1"
    assert Span.objects.filter(session=session).count() == 2


def test_a_root_left_under_the_trace_id_completes_the_running_named_session(client, key):
    trace, root = new_trace_id(), new_span_id()
    agent = span(
        "invoke_agent ops",
        trace_id=trace,
        span_id=root,
        attributes={"gen_ai.operation.name": "invoke_agent", "output.value": ANSWER},
    )
    post(client, export(agent, kb_tool(trace, root)), key=key)
    assert DiagnosisSession.objects.get(session_id=trace.hex()).status == "SUCCESS"
    named = DiagnosisSessionFactory(session_id="split-2", query="")
    stored_as_another_request_left_it(named, trace, name="chat", role="model", parent=root)

    joined = placeholders_joined({trace.hex()})

    assert joined == {"split-2"}
    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.answer) == ("split-2", "SUCCESS", ANSWER)
    assert ToolInvocation.objects.get().session_id == "split-2"


def test_a_rated_placeholder_keeps_its_half(client, key):
    trace, root = new_trace_id(), new_span_id()
    post(client, export(kb_tool(trace, root)), key=key)
    DiagnosisSession.objects.filter(session_id=trace.hex()).update(
        feedback="useful", feedback_at=timezone.now()
    )
    named = DiagnosisSessionFactory(session_id="split-3", succeeded=True)
    stored_as_the_other_request_left_it(named, trace, root)

    assert placeholders_joined({trace.hex()}) == set()

    assert ToolInvocation.objects.get().session_id == trace.hex()


def test_a_trace_in_two_named_sessions_is_left_as_it_is(client, key):
    trace, root = new_trace_id(), new_span_id()
    post(client, export(kb_tool(trace, root)), key=key)
    for name in ("split-4", "split-5"):
        stored_as_the_other_request_left_it(
            DiagnosisSessionFactory(session_id=name), trace, new_span_id()
        )

    assert placeholders_joined({trace.hex()}) == set()

    assert ToolInvocation.objects.get().session_id == trace.hex()


def test_a_request_checks_its_whole_trace_within_a_query_ceiling(
    client, key, django_assert_max_num_queries
):
    trace, root = new_trace_id(), new_span_id()
    run = span("invoke_agent ops", trace_id=trace, span_id=root, attributes={"session.id": "w"})
    post(client, export(run, kb_tool(trace, root)), key=key)

    with django_assert_max_num_queries(15):
        response = post(client, export(span("chat", trace_id=trace, parent=root)), key=key)

    assert response.status_code == 200, response.content
    assert DiagnosisSession.objects.get().session_id == "w"
    assert placeholders_joined({trace.hex()}) == set()
