"""POST /v1/traces: NUL characters are taken out of every text stored from a span, as
they are of its attributes (the question, the answer, a tool's arguments and result):
the user id, the span's name (and the tool name read from it) and its error message."""

import pytest

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


def test_nul_characters_are_taken_out_of_the_user_id_name_and_error(client, key):
    trace, root = new_trace_id(), new_span_id()
    tool = span(
        "execute_tool k\x00b",
        trace_id=trace,
        parent=root,
        attributes={"gen_ai.operation.name": "execute_tool"},
        error="index\x00 offline",
    )
    event = tool.events.add(name="exception")
    event.attributes.add(key="exception.type").value.string_value = "Timeout\x00Error"
    agent = span(
        "invoke\x00_agent",
        trace_id=trace,
        span_id=root,
        attributes={"session.id": "s-nul", "user.id": "\x00ops\x00-7\x00", "input.value": "q\x00"},
    )

    response = post(client, export(tool, agent), key=key)

    assert response.status_code == 200, response.content
    session = DiagnosisSession.objects.get()
    assert (session.user_id, session.query) == ("ops-7", "q")
    names = sorted(Span.objects.values_list("name", flat=True))
    assert names == ["execute_tool kb", "invoke_agent"]
    fact = ToolInvocation.objects.get()
    assert (fact.tool_name, fact.error_message) == ("kb", "TimeoutError")
    assert "\x00" not in str(Span.objects.get(span_id=tool.span_id.hex()).error_message)


def test_a_user_id_of_nul_characters_alone_is_none(client, key):
    trace = new_trace_id()
    post(client, export(span("agent", trace_id=trace, attributes={"user.id": "\x00\x00"})), key=key)

    assert DiagnosisSession.objects.get().user_id is None
