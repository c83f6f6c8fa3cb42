"""POST /v1/traces: spans become sessions, timeline rows and tool-invocation facts."""

import json

import pytest

from diagnosis.models import (
    DiagnosisSession,
    LevelRule,
    Span,
    ToolCatalogEntry,
    ToolInvocation,
    ToolKind,
)
from tests.otlp import (
    JSON,
    PROTOBUF,
    export,
    new_span_id,
    new_trace_id,
    otlp_json,
    post,
    response_of,
    span,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


def genai_run(trace_id: bytes, *, conversation: str | None = "conv-1", error: str | None = None):  # type: ignore[no-untyped-def]
    """The spans a pydantic-style GenAI agent run leaves: agent, model call, two tools."""
    root = new_span_id()
    common = {"gen_ai.conversation.id": conversation} if conversation else {}
    return [
        span(
            "invoke_agent agent",
            trace_id=trace_id,
            span_id=root,
            attributes={
                **common,
                "gen_ai.operation.name": "invoke_agent",
                "final_result": "清理磁盘。",
            },
            error=error,
            duration_ms=50,
        ),
        span(
            "chat local-model",
            trace_id=trace_id,
            parent=root,
            attributes={
                **common,
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "磁盘为什么满了？"}]}]
                ),
            },
        ),
        span(
            "execute_tool search_docs",
            trace_id=trace_id,
            parent=root,
            attributes={
                **common,
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_docs",
                "gen_ai.tool.call.arguments": '{"query": "disk full"}',
                "gen_ai.tool.call.result": '["E1234: disk full"]',
                "diagnosis.tool.kind": "retrieval",
            },
        ),
        span(
            "execute_tool get_time",
            trace_id=trace_id,
            parent=root,
            attributes={
                **common,
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_time",
                "gen_ai.tool.call.arguments": '{"zone": "UTC"}',
                "gen_ai.tool.call.result": "12:00",
            },
        ),
    ]


def test_a_genai_run_becomes_a_successful_session_with_its_tool_facts(client, key):
    response = post(client, export(*genai_run(new_trace_id())), key=key)

    assert response.status_code == 200, response.content
    assert response["Content-Type"] == PROTOBUF
    assert not response_of(response).HasField("partial_success")
    session = DiagnosisSession.objects.get(session_id="conv-1")
    assert session.status == "SUCCESS"
    assert session.query == "磁盘为什么满了？"
    assert session.answer == "清理磁盘。"
    facts = {f.tool_name: f for f in ToolInvocation.objects.filter(session=session)}
    assert facts["search_docs"].kind == "retrieval"
    assert facts["search_docs"].match_level == "L1"
    assert facts["search_docs"].hit_count == 1
    assert facts["get_time"].kind == "other"
    assert facts["get_time"].match_level is None
    assert Span.objects.filter(session=session).count() == 4


def test_the_session_is_scored_after_success(client, key):
    post(client, export(*genai_run(new_trace_id())), key=key)

    evaluation = DiagnosisSession.objects.get(session_id="conv-1").self_evaluation
    assert evaluation["evidence_score"] == 50  # a successful call (+30) and an L1 hit (+20)


def test_an_error_on_the_root_span_fails_the_session(client, key):
    post(client, export(*genai_run(new_trace_id(), error="boom")), key=key)

    session = DiagnosisSession.objects.get(session_id="conv-1")
    assert session.status == "FAILED"
    assert session.self_evaluation is None  # FAILED sessions are not scored automatically


def test_the_same_spans_sent_twice_are_stored_once(client, key):
    body = export(*genai_run(new_trace_id()))

    post(client, body, key=key)
    again = post(client, body, key=key)

    assert again.status_code == 200
    assert Span.objects.count() == 4
    assert ToolInvocation.objects.count() == 2


def test_without_a_session_attribute_the_trace_id_is_the_session(client, key):
    trace_id = new_trace_id()

    post(client, export(*genai_run(trace_id, conversation=None)), key=key)

    assert DiagnosisSession.objects.get().session_id == trace_id.hex()


def test_session_id_wins_over_conversation_id(client, key):
    spans = genai_run(new_trace_id())
    spans[0].attributes.add(key="session.id", value=spans[0].attributes[0].value)
    spans[0].attributes[-1].value.string_value = "sess-42"

    post(client, export(*spans), key=key)

    assert DiagnosisSession.objects.get().session_id == "sess-42"


def test_late_spans_of_a_scored_session_are_stored_and_rescored(client, key):
    trace_id = new_trace_id()
    root, model, search, other = genai_run(trace_id)
    post(client, export(root, model, other), key=key)
    first = DiagnosisSession.objects.get(session_id="conv-1").self_evaluation
    assert first["evidence_score"] == 30

    post(client, export(search), key=key)

    assert DiagnosisSession.objects.get(session_id="conv-1").self_evaluation["evidence_score"] == 50


def test_children_first_then_the_root_completes_the_session(client, key):
    root, *children = genai_run(new_trace_id())
    post(client, export(*children), key=key)
    assert DiagnosisSession.objects.get().status == "RUNNING"

    post(client, export(root), key=key)

    session = DiagnosisSession.objects.get()
    assert session.status == "SUCCESS"
    assert session.self_evaluation["evidence_score"] == 50


def test_a_json_body_gets_a_json_answer(client, key):
    body = json.dumps(otlp_json(export(*genai_run(new_trace_id())))).encode()

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 200, response.content
    assert response["Content-Type"] == JSON
    assert json.loads(response.content) == {}
    assert DiagnosisSession.objects.get().status == "SUCCESS"


def test_a_gzip_body_is_read(client, key):
    response = post(client, export(*genai_run(new_trace_id())), key=key, gzipped=True)

    assert response.status_code == 200
    assert Span.objects.count() == 4


def test_every_tool_name_seen_enters_the_catalog(client, key):
    post(client, export(*genai_run(new_trace_id())), key=key)

    assert set(ToolCatalogEntry.objects.values_list("tool_name", flat=True)) == {
        "search_docs",
        "get_time",
    }


def test_a_tool_the_operator_marks_as_retrieval_is_read_by_its_level_rule(client, key):
    ToolCatalogEntry.objects.create(
        tool_name="get_time",
        kind=ToolKind.RETRIEVAL,
        level_rule=LevelRule.CODE,
        code_pattern=r"\d\d:\d\d",
    )

    post(client, export(*genai_run(new_trace_id())), key=key)

    fact = ToolInvocation.objects.get(tool_name="get_time")
    assert (fact.kind, fact.match_level) == ("retrieval", "L0")


def test_an_explicit_match_level_wins_over_the_catalog(client, key):
    spans = genai_run(new_trace_id())
    spans[2].attributes.add(key="diagnosis.match_level").value.string_value = "L0"

    post(client, export(*spans), key=key)

    assert ToolInvocation.objects.get(tool_name="search_docs").match_level == "L0"


def test_a_tool_span_the_validator_refuses_is_a_partial_success(client, key):
    spans = genai_run(new_trace_id())
    name = next(a for a in spans[2].attributes if a.key == "gen_ai.tool.name")
    name.value.string_value = "search_docs_" + "x" * 128  # past toolName's 128 characters

    response = post(client, export(*spans), key=key)

    assert response.status_code == 200
    partial = response_of(response).partial_success
    assert partial.rejected_spans == 1
    assert "toolName" in partial.error_message
    assert not ToolInvocation.objects.filter(tool_name="search_docs").exists()
    assert Span.objects.count() == 3


def test_openinference_retriever_spans_are_retrieval_by_default(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span(
            "Agent workflow",
            trace_id=trace_id,
            span_id=root,
            attributes={
                "openinference.span.kind": "AGENT",
                "session.id": "oi-1",
                "input.value": "为什么 502？",
                "output.value": "后端超时。",
            },
        ),
        span(
            "kb",
            trace_id=trace_id,
            parent=root,
            attributes={
                "openinference.span.kind": "RETRIEVER",
                "input.value": "502",
                "retrieval.documents.0.document.content": "502 是网关超时",
                "retrieval.documents.1.document.content": "检查上游",
            },
        ),
    ]

    post(client, export(*spans), key=key)

    fact = ToolInvocation.objects.get()
    assert (fact.tool_name, fact.kind, fact.match_level, fact.hit_count) == (
        "kb",
        "retrieval",
        "L1",
        2,
    )
    session = DiagnosisSession.objects.get(session_id="oi-1")
    assert (session.query, session.answer) == ("为什么 502？", "后端超时。")


def test_a_failed_tool_span_is_a_failed_fact_with_its_exception_message(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    failing = span(
        "execute_tool search_docs",
        trace_id=trace_id,
        parent=root,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs"},
        error="index offline",
    )
    event = failing.events.add(name="exception")
    event.attributes.add(key="exception.type").value.string_value = "TimeoutError"
    event.attributes.add(key="exception.message").value.string_value = "index offline"

    post(client, export(span("agent", trace_id=trace_id, span_id=root), failing), key=key)

    fact = ToolInvocation.objects.get()
    assert fact.status == "FAILED"
    assert fact.error_message == "TimeoutError: index offline"
    assert fact.duration_ms == 10


def test_a_tool_spans_duration_is_exact_to_the_millisecond_whatever_its_start_nanosecond(
    client, key
):
    # A start time at which nanoseconds-as-float would round a 10 ms span down to 9 ms.
    start = 1_764_868_417_000_047_514
    trace_id, root = new_trace_id(), new_span_id()
    tool = span(
        "execute_tool search_docs",
        trace_id=trace_id,
        parent=root,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs"},
        start_ns=start,
    )

    post(client, export(span("agent", trace_id=trace_id, span_id=root), tool), key=key)

    assert ToolInvocation.objects.get().duration_ms == 10


def test_long_attribute_values_are_cut_and_flagged(client, key, settings):
    settings.OTLP_MAX_ATTRIBUTE_CHARS = 100
    spans = genai_run(new_trace_id())
    spans[2].attributes.add(key="note").value.string_value = "x" * 500

    post(client, export(*spans), key=key)

    stored = Span.objects.get(name="execute_tool search_docs")
    assert stored.truncated
    assert stored.attributes["note"] == "x" * 100
    assert stored.attributes["diagnosis.truncated"] == ["note"]


def spring_ai_run(trace_id: bytes) -> list:  # type: ignore[type-arg]
    """A Spring AI ChatClient call with one tool call, as its observations name things
    (spring.ai.chat.client, spring.ai.tool), exported by micrometer-tracing-bridge-otel."""
    root = new_span_id()
    chat = new_span_id()
    return [
        span(
            "spring_ai chat_client",
            trace_id=trace_id,
            span_id=root,
            attributes={
                "gen_ai.operation.name": "framework",
                "gen_ai.system": "spring_ai",
                "spring.ai.kind": "chat_client",
                "spring.ai.chat.client.conversation.id": "spring-conv-7",
                "gen_ai.prompt": "payment-gateway 为什么 504？",
                "gen_ai.completion": "连接池耗尽，扩容连接池。",
            },
            duration_ms=80,
        ),
        span(
            "chat gpt-4o",
            trace_id=trace_id,
            span_id=chat,
            parent=root,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.system": "openai"},
        ),
        span(
            "tool_call QueryInternalDocsTools",
            trace_id=trace_id,
            parent=chat,
            attributes={
                "gen_ai.operation.name": "framework",
                "gen_ai.system": "spring_ai",
                "spring.ai.kind": "tool_call",
                "spring.ai.tool.definition.name": "QueryInternalDocsTools",
                "spring.ai.tool.call.arguments": '{"query": "payment-gateway 504"}',
                "spring.ai.tool.call.result": '{"documents": ["PG-504 runbook", "连接池"]}',
            },
        ),
    ]


def test_a_spring_ai_trace_becomes_a_session_with_its_tool_fact(client, key):
    ToolCatalogEntry.objects.create(tool_name="QueryInternalDocsTools", kind=ToolKind.RETRIEVAL)

    post(client, export(*spring_ai_run(new_trace_id())), key=key)

    session = DiagnosisSession.objects.get(session_id="spring-conv-7")
    assert (session.status, session.query) == ("SUCCESS", "payment-gateway 为什么 504？")
    assert session.answer == "连接池耗尽，扩容连接池。"
    fact = ToolInvocation.objects.get(session=session)
    assert (fact.tool_name, fact.kind, fact.match_level, fact.hit_count) == (
        "QueryInternalDocsTools",
        "retrieval",
        "L1",
        2,
    )
    assert fact.query == '{"query": "payment-gateway 504"}'
    assert session.self_evaluation["evidence_score"] == 50


def test_children_sent_before_the_root_that_names_the_session_join_that_session(client, key):
    trace_id, root_id = new_trace_id(), new_span_id()
    root = span(
        "invoke_agent",
        trace_id=trace_id,
        span_id=root_id,
        attributes={"session.id": "ticket-4711", "input.value": "q", "output.value": "a"},
    )
    tool = span(
        "execute_tool kb",
        trace_id=trace_id,
        parent=root_id,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "kb",
            "diagnosis.tool.kind": "retrieval",
            "diagnosis.match_level": "L0",
        },
    )
    post(client, export(tool), key=key)
    assert DiagnosisSession.objects.get().session_id == trace_id.hex()

    post(client, export(root), key=key)

    session = DiagnosisSession.objects.get()
    assert session.session_id == "ticket-4711"
    assert ToolInvocation.objects.get().session_id == "ticket-4711"
    assert Span.objects.filter(session=session).count() == 2
    assert session.self_evaluation["evidence_score"] == 65
