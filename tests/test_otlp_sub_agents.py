"""POST /v1/traces: an agent that delegates to another (pydantic-ai's nested agent) leaves
one trace whose sub-agent spans carry a conversation id of their own. The trace is one
session, the one its root names, however the exporter batched the spans: a batch span
processor exports spans as they end, so the sub-agent's often arrive first."""

import json

import pytest
from django.test import Client

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from diagnosis.otlp_placeholders import placeholders_joined
from tests.factories import DiagnosisSessionFactory
from tests.otlp import (
    export,
    new_span_id,
    new_trace_id,
    post,
    response_of,
    span,
    stored_as_another_request_left_it,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

QUESTION = "payment-gateway 为什么 504？"
ANSWER = "payment-gateway 连接池耗尽：扩容。"
# What the whole run earns: a successful retrieval (+30) with the exact code (L0, +35).
WHOLE_TRACE_SCORE = 65


def delegating_run(trace: bytes, *, root_conversation="conv-a", sub_conversation="conv-b"):  # type: ignore[no-untyped-def]
    """The spans of one run, in the order a batch span processor exports them (as they
    end): the sub-agent's first, the root last. Returns (sub-agent spans, root spans)."""
    root, delegate, sub_agent = new_span_id(), new_span_id(), new_span_id()
    root_conv = {"gen_ai.conversation.id": root_conversation}
    sub_conv = {"gen_ai.conversation.id": sub_conversation}
    sub_spans = [
        span(
            "execute_tool search_runbooks",
            trace_id=trace,
            parent=sub_agent,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_runbooks",
                "gen_ai.tool.call.arguments": '{"q": "PG-504"}',
                "gen_ai.tool.call.result": '["PG-504: pool exhausted"]',
                "diagnosis.tool.kind": "retrieval",
                "diagnosis.match_level": "L0",
            },
        ),
        span(
            "chat sub-model",
            trace_id=trace,
            parent=sub_agent,
            attributes={**sub_conv, "gen_ai.operation.name": "chat"},
        ),
        span(
            "invoke_agent researcher",
            trace_id=trace,
            span_id=sub_agent,
            parent=delegate,
            attributes={
                **sub_conv,
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "查 PG-504"}]}]
                ),
                "final_result": "PG-504: pool exhausted",
            },
        ),
        span(
            "execute_tool ask_researcher",
            trace_id=trace,
            span_id=delegate,
            parent=root,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask"},
        ),
    ]
    root_spans = [
        span(
            "chat main-model",
            trace_id=trace,
            parent=root,
            attributes={**root_conv, "gen_ai.operation.name": "chat"},
        ),
        span(
            "invoke_agent main",
            trace_id=trace,
            span_id=root,
            attributes={
                **root_conv,
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
                ),
                "final_result": ANSWER,
            },
            duration_ms=80,
        ),
    ]
    return sub_spans, root_spans


def orderings(trace: bytes) -> dict[str, list]:  # type: ignore[type-arg]
    sub_spans, root_spans = delegating_run(trace)
    return {
        "one batch": [sub_spans + root_spans],
        "sub-agent first": [sub_spans, root_spans],
        "root first": [root_spans, sub_spans],
    }


def assert_the_run_is_session_a_alone(make_client) -> None:  # type: ignore[no-untyped-def]
    reader = make_client("agent")
    response = reader.get("/api/sessions/conv-a")
    assert response.status_code == 200, response.content
    session = response.json()
    assert (session["status"], session["query"], session["answer"]) == (
        "SUCCESS",
        QUESTION,
        ANSWER,
    )
    assert sorted(i["toolName"] for i in session["toolInvocations"]) == ["ask", "search_runbooks"]
    assert session["selfEvaluation"]["evidence_score"] == WHOLE_TRACE_SCORE
    assert reader.get("/api/sessions/conv-b").status_code == 404
    assert set(Span.objects.values_list("session_id", flat=True)) == {"conv-a"}
    assert Span.objects.count() == 6
    assert set(ToolInvocation.objects.values_list("session_id", flat=True)) == {"conv-a"}
    # The reader's rating is taken: the session is no longer running.
    rated = Client().post(
        "/api/feedback",
        {"sessionId": "conv-a", "feedback": "useful"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Feedback {session['feedbackToken']}",
    )
    assert rated.status_code in (200, 201), rated.content


@pytest.mark.parametrize("ordering", ["one batch", "sub-agent first", "root first"])
def test_a_delegating_run_is_one_session_named_by_its_root_whatever_the_batching(
    client, key, make_client, ordering
):
    for batch in orderings(new_trace_id())[ordering]:
        response = post(client, export(*batch), key=key)
        assert response.status_code == 200, response.content
        assert not response_of(response).HasField("partial_success")

    assert_the_run_is_session_a_alone(make_client)


@pytest.mark.parametrize("ordering", ["sub-agent first", "root first"])
def test_a_resent_batch_leaves_the_run_in_its_one_session(client, key, make_client, ordering):
    batches = orderings(new_trace_id())[ordering]
    for batch in [*batches, *batches]:
        response = post(client, export(*batch), key=key)
        assert response.status_code == 200, response.content

    assert_the_run_is_session_a_alone(make_client)


def test_a_sub_agent_session_holding_another_trace_keeps_it_and_gives_up_this_one(client, key):
    trace, other = new_trace_id(), new_trace_id()
    earlier = span(
        "invoke_agent b", trace_id=other, attributes={"gen_ai.conversation.id": "conv-b"}
    )
    post(client, export(earlier), key=key)
    sub_spans, root_spans = delegating_run(trace)

    post(client, export(*sub_spans), key=key)
    post(client, export(*root_spans), key=key)

    assert Span.objects.get(trace_id=other.hex()).session_id == "conv-b"
    assert DiagnosisSession.objects.get(session_id="conv-b").status == "SUCCESS"
    assert set(Span.objects.filter(trace_id=trace.hex()).values_list("session_id", flat=True)) == {
        "conv-a"
    }
    assert set(ToolInvocation.objects.values_list("session_id", flat=True)) == {"conv-a"}
    assert (
        DiagnosisSession.objects.get(session_id="conv-a").self_evaluation["evidence_score"]
        == WHOLE_TRACE_SCORE
    )


def test_sub_agent_spans_committed_with_the_root_at_once_join_the_roots_session(client, key):
    """The root's request and the sub-agent's committed at the same time, neither seeing
    the other's spans (SQLite cannot interleave them: the root's half is built as that
    request leaves it); the later one's look after its commit joins them."""
    trace = new_trace_id()
    sub_spans, _ = delegating_run(trace)
    post(client, export(*sub_spans), key=key)
    root_session = DiagnosisSessionFactory(session_id="conv-a", succeeded=True, answer=ANSWER)
    stored_as_another_request_left_it(
        root_session, trace, name="invoke_agent main", role="agent", answer=ANSWER
    )

    joined = placeholders_joined({trace.hex()})

    assert joined == {"conv-a"}
    assert not DiagnosisSession.objects.filter(session_id="conv-b").exists()
    assert set(Span.objects.values_list("session_id", flat=True)) == {"conv-a"}
    assert set(ToolInvocation.objects.values_list("session_id", flat=True)) == {"conv-a"}
