"""POST /v1/traces with what pydantic-ai really exports for an agent that delegates to
another from a tool: the nested run's spans carry a `gen_ai.conversation.id` of their
own, and they end (so a batch span processor exports them) before the root's. The spans
are made by pydantic-ai and the OpenTelemetry SDK and encoded by the OTLP exporter's own
encoder; the run is one session, the root agent's, whichever batch holds what."""

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from diagnosis.models import DiagnosisSession, ToolCatalogEntry, ToolKind
from tests.otlp import post, response_of
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

ANSWER = "scale the payment-gateway pool"


def a_delegating_run() -> tuple[str, list]:  # type: ignore[type-arg]
    """The root run's conversation id, and its spans in the order they ended."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.test import TestModel

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def instrumented() -> list:  # type: ignore[type-arg]
        return [Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))]

    researcher = Agent(
        TestModel(custom_output_text="PG-504: pool exhausted"), capabilities=instrumented()
    )

    @researcher.tool_plain
    def search_runbooks(q: str) -> list[str]:
        return ["PG-504: pool exhausted"]

    main = Agent(TestModel(custom_output_text=ANSWER), capabilities=instrumented())

    @main.tool_plain
    async def ask_researcher(question: str) -> str:
        return (await researcher.run(question)).output

    result = main.run_sync("payment-gateway 为什么 504？")
    provider.shutdown()
    return result.conversation_id, list(exporter.get_finished_spans())


@pytest.mark.parametrize("first_batch", [None, 3, 5])
def test_a_pydantic_ai_delegating_run_is_the_root_agents_one_session(client, key, first_batch):
    ToolCatalogEntry.objects.create(tool_name="search_runbooks", kind=ToolKind.RETRIEVAL)
    conversation, spans = a_delegating_run()
    sub_conversations = {s.attributes.get("gen_ai.conversation.id") for s in spans} - {conversation}
    assert len(sub_conversations) == 1  # the nested run has a conversation of its own
    batches = [spans] if first_batch is None else [spans[:first_batch], spans[first_batch:]]

    for batch in batches:
        response = post(client, encode_spans(batch), key=key)
        assert response.status_code == 200, response.content
        assert not response_of(response).HasField("partial_success")

    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.answer) == (conversation, "SUCCESS", ANSWER)
    assert session.query == "payment-gateway 为什么 504？"
    facts = {fact.tool_name: fact for fact in session.tool_invocations.all()}
    assert set(facts) == {"ask_researcher", "search_runbooks"}
    assert (facts["search_runbooks"].match_level, facts["search_runbooks"].hit_count) == ("L1", 1)
    assert session.self_evaluation["evidence_score"] == 50
