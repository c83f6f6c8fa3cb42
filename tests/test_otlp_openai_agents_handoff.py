"""POST /v1/traces: a handoff between agents of the OpenAI Agents SDK, as OpenInference
exports it (an OpenInference TOOL span named `handoff to <agent>`, without `tool.name`,
`input.value` the agent handing off and `output.value` the one taking over), is kept in
the session's timeline but is no tool call: handing off gathers no evidence. The spans
here are made by the SDK's tracing and OpenInference's processor, and encoded by the
OTLP exporter's own encoder."""

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from diagnosis.models import DiagnosisSession, Span, ToolCatalogEntry, ToolInvocation
from tests.otlp import post, response_of
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


def exported(run) -> object:  # type: ignore[no-untyped-def]
    """The OTLP request of the spans OpenInference makes of `run` (SDK tracing calls)."""
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        run()
    finally:
        instrumentor.uninstrument()
    return encode_spans(spans.get_finished_spans())


def triage_that_hands_off(*, then_tool: str | None = None):  # type: ignore[no-untyped-def]
    from agents.tracing import agent_span, function_span, handoff_span, trace

    def run() -> None:
        with trace("support"):
            with (
                agent_span(name="triage", handoffs=["billing"]),
                handoff_span(from_agent="triage", to_agent="billing"),
            ):
                pass
            with agent_span(name="billing"):
                if then_tool:
                    with function_span(name=then_tool, input='{"q": "E1234"}', output="[]"):
                        pass

    return run


def test_a_triage_agent_that_only_hands_off_has_no_tool_call(client, key, make_client):
    response = post(client, exported(triage_that_hands_off()), key=key)

    assert response.status_code == 200, response.content
    assert not response_of(response).HasField("partial_success")
    handoff = Span.objects.get(name="handoff to billing")
    assert handoff.role == "other"
    assert (handoff.attributes["input.value"], handoff.attributes["output.value"]) == (
        "triage",
        "billing",
    )
    assert not ToolInvocation.objects.exists()
    assert not ToolCatalogEntry.objects.exists()
    session = (
        make_client("agent")
        .get(f"/api/sessions/{DiagnosisSession.objects.get().session_id}")
        .json()
    )
    assert session["status"] == "SUCCESS"
    assert session["toolInvocations"] == []
    assert session["selfEvaluation"]["evidence_score"] == 0
    assert [f["name"] for f in session["selfEvaluation"]["factors"]] == ["no_tool_call"]


def test_the_tools_after_a_handoff_are_the_sessions_only_tool_calls(client, key):
    post(client, exported(triage_that_hands_off(then_tool="lookup")), key=key)

    assert list(ToolInvocation.objects.values_list("tool_name", flat=True)) == ["lookup"]
    assert DiagnosisSession.objects.get().self_evaluation["evidence_score"] == 30


def test_a_function_tool_named_handoff_is_still_a_tool_call(client, key):
    """A function tool's span names its tool (`tool.name`): a handoff's never does."""
    post(client, exported(triage_that_hands_off(then_tool="handoff to billing")), key=key)

    assert list(ToolInvocation.objects.values_list("tool_name", flat=True)) == [
        "handoff to billing"
    ]
