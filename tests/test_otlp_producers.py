"""Real span producers export to a live server of ours (gunicorn + qcluster): a pydantic-ai
agent (OpenTelemetry GenAI spans) and the OpenAI Agents SDK with OpenInference, both
talking to the local fake chat-completions server and calling a retrieval tool and another
tool. The session appears, succeeds, carries its tool facts, is scored by the worker, and
`useful` feedback makes a case."""

import json
import urllib.request

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tests.chat_server import chat_server
from tests.processes import post_json, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

QUESTION = "订单服务报 E1234，磁盘为什么满了？"
ANSWER = "日志没有轮转：清理 /var/log 并开启 logrotate。"
DOCS = ["E1234: 磁盘写满，检查日志轮转"]


def get_json(url: str, key: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Api-Key {key}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def exporting_provider(base: str, key: str) -> TracerProvider:
    provider = TracerProvider()
    exporter = OTLPSpanExporter(
        endpoint=f"{base}/v1/traces", headers={"Authorization": f"Api-Key {key}"}
    )
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def the_scored_session(base: str, key: str) -> dict:
    found: dict = {}

    def scored() -> bool:
        sessions = get_json(f"{base}/api/sessions", key)["results"]
        if len(sessions) == 1 and sessions[0]["selfEvaluation"] is not None:
            found.update(get_json(f"{base}/api/sessions/{sessions[0]['sessionId']}", key))
            return True
        return False

    wait_for(scored, timeout=60, what="the session to be scored by the worker")
    return found


def assert_scored_with_facts_and_useful_makes_a_case(base: str, key: str) -> None:
    session = the_scored_session(base, key)
    assert session["status"] == "SUCCESS"
    assert session["query"] == QUESTION
    assert session["answer"] == ANSWER
    facts = {fact["toolName"]: fact for fact in session["toolInvocations"]}
    assert set(facts) == {"search_docs", "get_time"}
    assert (facts["search_docs"]["kind"], facts["search_docs"]["matchLevel"]) == ("retrieval", "L1")
    assert facts["search_docs"]["hitCount"] == 1
    assert (facts["get_time"]["kind"], facts["get_time"]["matchLevel"]) == ("other", None)
    assert all(fact["status"] == "SUCCESS" for fact in facts.values())
    evaluation = session["selfEvaluation"]
    assert evaluation["evidence_score"] == 50
    assert [f["name"] for f in evaluation["factors"]] == [
        "has_successful_tool_call",
        "l1_semantic_match",
    ]
    status, body = post_json(
        f"{base}/api/feedback", {"sessionId": session["sessionId"], "feedback": "useful"}, key=key
    )
    assert status == 200, body
    assert body["caseId"]
    case = get_json(f"{base}/api/cases/{body['caseId']}", key)
    assert case["solution"] == ANSWER


def test_a_pydantic_ai_agent_is_scored_and_its_useful_answer_becomes_a_case(service):
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    base, key = service
    provider = exporting_provider(base, key)
    with chat_server() as chat:
        chat.answer(then="agent")
        chat.tool_calls = [("search_docs", {"query": "E1234 磁盘"}), ("get_time", {"zone": "UTC"})]
        chat.final_answer = ANSWER
        model = OpenAIChatModel(
            "local-model", provider=OpenAIProvider(base_url=chat.base_url, api_key="local")
        )
        agent = Agent(
            model,
            capabilities=[
                Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
            ],
        )

        @agent.tool_plain
        def search_docs(query: str) -> list[str]:
            # How an agent marks a retrieval tool without touching the catalog.
            trace.get_current_span().set_attribute("diagnosis.tool.kind", "retrieval")
            return DOCS

        @agent.tool_plain
        def get_time(zone: str) -> str:
            return "12:00"

        assert agent.run_sync(QUESTION).output == ANSWER
    assert provider.force_flush(timeout_millis=30_000)
    provider.shutdown()

    assert_scored_with_facts_and_useful_makes_a_case(base, key)


def test_an_openai_agents_sdk_agent_with_openinference_is_scored_likewise(service):
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    base, key = service
    provider = exporting_provider(base, key)
    instrumentor = OpenAIAgentsInstrumentor()
    # search_docs is a retriever: its spans are RETRIEVER, which is retrieval by default.
    instrumentor.instrument(tracer_provider=provider, tool_span_kinds={"search_docs": "RETRIEVER"})
    try:
        with chat_server() as chat:
            chat.answer(then="agent")
            chat.tool_calls = [
                ("search_docs", {"query": "E1234 磁盘"}),
                ("get_time", {"zone": "UTC"}),
            ]
            chat.final_answer = ANSWER

            @function_tool
            def search_docs(query: str) -> list[str]:
                return DOCS

            @function_tool
            def get_time(zone: str) -> str:
                return "12:00"

            client = AsyncOpenAI(base_url=chat.base_url, api_key="local")
            agent = Agent(
                name="diagnosis",
                instructions="Answer operators' incident questions.",
                model=OpenAIChatCompletionsModel("local-model", client),
                tools=[search_docs, get_time],
            )
            assert Runner.run_sync(agent, QUESTION).final_output == ANSWER
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(timeout_millis=30_000)
    provider.shutdown()

    assert_scored_with_facts_and_useful_makes_a_case(base, key)
