"""POST /v1/traces: what the answer's partial_success says about a span stored otherwise
than sent (a session id of a type no session can have) or refused for its ids: the span
is named, and reasons shared by many spans stay one line with their count."""

import pytest

from diagnosis.models import DiagnosisSession
from tests.otlp import export, new_span_id, new_trace_id, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("value", "shown"), [(["a", "b"], "['a', 'b']"), (4711.5, "4711.5"), (True, "True")]
)
def test_a_session_id_of_another_type_is_ignored_and_said(client, key, value, shown):
    trace, root = new_trace_id(), new_span_id()
    agent = span(
        "invoke_agent",
        trace_id=trace,
        span_id=root,
        attributes={"session.id": value, "input.value": "q", "output.value": "a"},
    )

    response = post(client, export(agent), key=key)

    assert response.status_code == 200, response.content
    partial = response_of(response).partial_success
    assert partial.rejected_spans == 0
    assert "session.id" in partial.error_message
    assert shown in partial.error_message
    assert root.hex() in partial.error_message
    assert DiagnosisSession.objects.get().session_id == trace.hex()


def test_a_session_id_of_another_type_falls_back_to_the_next_attribute_and_says_so(client, key):
    trace = new_trace_id()
    agent = span(
        "invoke_agent",
        trace_id=trace,
        attributes={"session.id": ["x"], "gen_ai.conversation.id": "conv-9", "output.value": "a"},
    )

    response = post(client, export(agent), key=key)

    assert "session.id" in response_of(response).partial_success.error_message
    assert DiagnosisSession.objects.get().session_id == "conv-9"


def test_spans_refused_for_their_ids_are_named_and_counted_in_one_line(client, key):
    zero_trace = b"\0" * 16
    spans = [
        span("chat one", trace_id=zero_trace, span_id=bytes.fromhex("0102030405060708")),
        span("chat two", trace_id=zero_trace, span_id=bytes.fromhex("1112131415161718")),
        span("chat three", trace_id=zero_trace, span_id=bytes.fromhex("2122232425262728")),
        span("nameless id", trace_id=new_trace_id(), span_id=b"\x01\x02"),
    ]

    response = post(client, export(*spans), key=key)

    partial = response_of(response).partial_success
    assert partial.rejected_spans == 4
    message = partial.error_message
    assert message.count("没有有效的 trace id") == 1
    assert "(x3)" in message
    for name, span_id in [
        ("chat one", "0102030405060708"),
        ("chat two", "1112131415161718"),
        ("chat three", "2122232425262728"),
    ]:
        assert name in message
        assert span_id in message
    assert "nameless id" in message
    assert "没有有效的 span id" in message


def test_the_different_hints_one_span_had_ignored_are_listed_with_no_count(client, key):
    trace, root, tool = new_trace_id(), new_span_id(), new_span_id()
    hints = {
        "diagnosis.tool.kind": "weird",
        "diagnosis.hit_count": "lots",
        "diagnosis.match_level": "L9",
    }
    spans = [
        span("invoke_agent", trace_id=trace, span_id=root, attributes={"session.id": "s"}),
        span(
            "execute_tool kb",
            trace_id=trace,
            span_id=tool,
            parent=root,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "kb", **hints},
        ),
    ]

    response = post(client, export(*spans), key=key)

    partial = response_of(response).partial_success
    assert partial.rejected_spans == 0
    message = partial.error_message
    assert message.count(tool.hex()) == 1
    for attribute in hints:
        assert message.count(f"忽略 {attribute}") == 1
    assert "(x" not in message
