"""POST /v1/traces: a retrieval result longer than OTLP_MAX_ATTRIBUTE_CHARS keeps its hits
and its match level (read from the whole value as sent, before it is cut for storing),
and one the agent cut itself (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) counts the documents
that arrived whole."""

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
from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

DOCUMENTS = [{"id": n, "content": f"runbook {n}: " + "连接池耗尽，扩容。" * 60} for n in range(40)]


def run_with_result(result: str):  # type: ignore[no-untyped-def]
    trace, root = new_trace_id(), new_span_id()
    return export(
        span(
            "invoke_agent",
            trace_id=trace,
            span_id=root,
            attributes={"session.id": "long-1", "input.value": "504?", "output.value": "扩容"},
        ),
        span(
            "execute_tool search_docs",
            trace_id=trace,
            parent=root,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_docs",
                "gen_ai.tool.call.result": result,
            },
        ),
    )


@pytest.fixture(autouse=True)
def retrieval_tool(db):  # type: ignore[no-untyped-def]
    return ToolCatalogEntry.objects.create(tool_name="search_docs", kind=ToolKind.RETRIEVAL)


def test_a_json_list_result_past_the_limit_keeps_its_hits_and_level(client, key):
    result = json.dumps(DOCUMENTS, ensure_ascii=False)
    assert len(result) > 16384

    post(client, run_with_result(result), key=key)

    fact = ToolInvocation.objects.get()
    assert (fact.hit_count, fact.match_level) == (40, "L1")
    assert DiagnosisSession.objects.get().self_evaluation["evidence_score"] == 50
    stored = Span.objects.get(name="execute_tool search_docs")
    assert len(stored.result) == 16384
    assert stored.attributes["diagnosis.truncated"] == ["gen_ai.tool.call.result"]


def test_an_exact_code_past_the_limit_is_still_found(client, key, retrieval_tool):
    retrieval_tool.level_rule = LevelRule.CODE
    retrieval_tool.code_pattern = r"PG-504"
    retrieval_tool.save()
    result = json.dumps([*DOCUMENTS, {"id": 99, "content": "PG-504 runbook"}], ensure_ascii=False)

    post(client, run_with_result(result), key=key)

    fact = ToolInvocation.objects.get()
    assert (fact.hit_count, fact.match_level) == (41, "L0")


def test_a_list_the_agent_cut_counts_the_documents_that_arrived_whole(client, key):
    whole = json.dumps(DOCUMENTS, ensure_ascii=False)
    cut = whole[:4000]  # as OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=4000 leaves it
    arrived_whole = sum(
        1 for n in range(1, 41) if len(json.dumps(DOCUMENTS[:n], ensure_ascii=False)) - 1 < 4000
    )
    assert 0 < arrived_whole < 40

    post(client, run_with_result(cut), key=key)

    fact = ToolInvocation.objects.get()
    assert (fact.hit_count, fact.match_level) == (arrived_whole, "L1")


def test_a_documents_object_the_agent_cut_counts_the_documents_that_arrived_whole(client, key):
    cut = json.dumps({"total": 40, "documents": DOCUMENTS}, ensure_ascii=False)[:3000]

    post(client, run_with_result(cut), key=key)

    assert ToolInvocation.objects.get().hit_count > 0


@pytest.mark.parametrize(
    "result",
    ["[1, 2] and some words", "[INFO] found nothing", "[1, 2]]", '{"documents": [1, 2}'],
)
def test_a_text_that_is_no_cut_json_counts_no_documents(client, key, result):
    post(client, run_with_result(result), key=key)

    assert ToolInvocation.objects.get().hit_count == 0
