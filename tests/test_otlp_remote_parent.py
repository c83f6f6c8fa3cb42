"""POST /v1/traces from an agent behind an instrumented gateway: the gateway sends
`traceparent` but exports its spans elsewhere, so the agent's top span has a parent that
never arrives. OTLP's Span.flags say that parent is remote, and the span is the root when
the agent's run is at or below it (tests/test_otlp_remote_root.py has the spans whose
parent is remote that are not)."""

import json

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.trace.v1.trace_pb2 import SpanFlags
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from tests.otlp import (
    JSON,
    export,
    kb_tool,
    new_span_id,
    new_trace_id,
    otlp_json,
    post,
    span,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

HAS_IS_REMOTE = SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
IS_REMOTE = SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
SAMPLED = 0x01  # W3C trace flags, which the Java and Node SDKs put in the low byte

AGENT_RUN = {
    "gen_ai.operation.name": "invoke_agent",
    "session.id": "behind-gateway",
    "input.value": "订单服务 504 怎么办？",
    "output.value": "payment-gateway 连接池耗尽：扩容。",
}


def agent_behind_a_gateway(flags: int):  # type: ignore[no-untyped-def]
    """The agent's spans: its top span's parent is the gateway's span, never exported here."""
    trace_id, top = new_trace_id(), new_span_id()
    agent = span("invoke_agent", trace_id=trace_id, span_id=top, parent=new_span_id())
    agent.flags = flags
    for name, value in AGENT_RUN.items():
        agent.attributes.add(key=name).value.string_value = value
    return [agent, kb_tool(trace_id, top)]


def assert_completed_and_scored() -> None:
    session = DiagnosisSession.objects.get()
    assert session.session_id == "behind-gateway"
    assert (session.status, session.query, session.answer) == (
        "SUCCESS",
        AGENT_RUN["input.value"],
        AGENT_RUN["output.value"],
    )
    assert session.self_evaluation["evidence_score"] == 65


@pytest.mark.parametrize(
    "flags",
    [HAS_IS_REMOTE | IS_REMOTE, HAS_IS_REMOTE | IS_REMOTE | SAMPLED],
    ids=["python-sdk", "java-node-sdk-sampled"],
)
def test_a_top_span_whose_parent_is_remote_completes_the_session(client, key, flags):
    response = post(client, export(*agent_behind_a_gateway(flags)), key=key)

    assert response.status_code == 200, response.content
    assert_completed_and_scored()


def test_a_top_span_whose_parent_is_remote_completes_the_session_in_otlp_json(client, key):
    document = otlp_json(export(*agent_behind_a_gateway(HAS_IS_REMOTE | IS_REMOTE)))
    top = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert top["flags"] == 0x300  # OTLP JSON carries it as a number

    response = post(client, json.dumps(document).encode(), key=key, content_type=JSON)

    assert response.status_code == 200, response.content
    assert_completed_and_scored()


def test_the_session_of_a_remote_parented_top_span_takes_feedback(client, key, api):
    post(client, export(*agent_behind_a_gateway(HAS_IS_REMOTE | IS_REMOTE)), key=key)

    response = api.post(
        "/api/feedback", {"sessionId": "behind-gateway", "feedback": "useful"}, format="json"
    )

    assert response.status_code == 200, response.content


@pytest.mark.parametrize(
    "flags", [0, HAS_IS_REMOTE, IS_REMOTE], ids=["unknown", "known-local", "remote-bit-not-known"]
)
def test_a_span_whose_parent_is_not_known_to_be_remote_waits_for_its_parent(client, key, flags):
    post(client, export(*agent_behind_a_gateway(flags)), key=key)

    assert DiagnosisSession.objects.get().status == "RUNNING"


def test_spans_the_python_sdk_exports_under_a_gateways_traceparent_complete_the_session(
    client, key
):
    """The SDK's own OTLP encoder: an HTTP server span continuing the gateway's context,
    the agent run inside it, a retrieval tool inside that."""
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    tracer = provider.get_tracer("agent-service")
    gateway = TraceContextTextMapPropagator().extract(
        {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    )
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "kb",
        "diagnosis.tool.kind": "retrieval",
        "diagnosis.match_level": "L0",
    }
    # Each span starts inside the one before it (a `with` enters its items in order).
    with (
        tracer.start_as_current_span("POST /chat", context=gateway, kind=SpanKind.SERVER),
        tracer.start_as_current_span("invoke_agent", attributes=AGENT_RUN),
        tracer.start_as_current_span("execute_tool kb", attributes=tool),
    ):
        pass
    request = encode_spans(exported.get_finished_spans())
    flags = {s.name: s.flags for s in request.resource_spans[0].scope_spans[0].spans}
    assert flags == {"POST /chat": 0x300, "invoke_agent": 0x100, "execute_tool kb": 0x100}

    response = post(client, request, key=key)

    assert response.status_code == 200, response.content
    assert_completed_and_scored()
    server_span = Span.objects.get(name="POST /chat")
    # The root, but no agent span: the timeline labels invoke_agent, below it, the agent.
    assert (server_span.role, server_span.parent_span_id) == ("other", "b7ad6b7169203331")
    assert ToolInvocation.objects.get().match_level == "L0"


def test_a_top_span_with_a_remote_parent_sent_before_its_children_completes_the_session(
    client, key
):
    top, tool = agent_behind_a_gateway(HAS_IS_REMOTE | IS_REMOTE)

    post(client, export(top), key=key)
    post(client, export(tool), key=key)

    assert_completed_and_scored()
