"""POST /v1/traces with spans as odd producers send them: odd values get a clear answer,
never a 500 that loses the batch, and a trace keeps its session whatever the order."""

import gzip
import json

import pytest

from caselibrary.services.index import case_index_build
from diagnosis.models import DiagnosisSession, Span, ToolCatalogEntry, ToolInvocation
from tests.factories import CaseLibraryFactory
from tests.otlp import (
    export,
    new_span_id,
    new_trace_id,
    post,
    response_of,
    span,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


def a_tool(trace_id: bytes, parent: bytes, name: str = "kb", **attributes):  # type: ignore[no-untyped-def]
    return span(
        f"execute_tool {name}",
        trace_id=trace_id,
        parent=parent,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "diagnosis.tool.kind": "retrieval",
            **attributes,
        },
    )


@pytest.mark.parametrize(
    "attributes",
    [
        {"gen_ai.input.messages": json.dumps([{"role": "user", "parts": 5}])},
        {"gen_ai.input.messages": json.dumps([{"role": "user", "parts": True}])},
        {"gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": 7}])},
        {"input.value": "[" * 3000},
        {"output.value": "[" * 3000},
    ],
    ids=["parts-a-number", "parts-true", "output-parts-a-number", "deep-question", "deep-answer"],
)
def test_an_odd_message_on_the_root_is_stored_and_completes_the_session(client, key, attributes):
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span("invoke_agent", trace_id=trace_id, span_id=root, attributes=attributes),
        a_tool(trace_id, root, **{"diagnosis.match_level": "L0"}),
    ]

    response = post(client, export(*spans), key=key)

    assert response.status_code == 200, response.content
    session = DiagnosisSession.objects.get(session_id=trace_id.hex())
    assert session.status == "SUCCESS"
    assert Span.objects.filter(session=session).count() == 2
    assert ToolInvocation.objects.get(session=session).match_level == "L0"


def test_a_tool_result_nested_past_the_parser_counts_no_documents(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span("invoke_agent", trace_id=trace_id, span_id=root),
        a_tool(trace_id, root, **{"gen_ai.tool.call.result": "[" * 3000}),
    ]

    response = post(client, export(*spans), key=key)

    assert response.status_code == 200, response.content
    fact = ToolInvocation.objects.get()
    assert (fact.hit_count, fact.match_level) == (0, "NONE")


def test_a_root_whose_parent_id_is_all_zeros_completes_its_session(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span(
            "agent run",
            trace_id=trace_id,
            span_id=root,
            parent=bytes(8),
            attributes={"session.id": "zero-parent", "input.value": "q", "output.value": "a"},
        ),
        a_tool(trace_id, root, **{"diagnosis.match_level": "L0"}),
    ]

    post(client, export(*spans), key=key)

    session = DiagnosisSession.objects.get(session_id="zero-parent")
    assert (session.status, session.query, session.answer) == ("SUCCESS", "q", "a")
    assert session.self_evaluation["evidence_score"] == 65


def test_a_session_id_that_looks_like_a_phone_number_still_names_the_session(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    attributes = {"session.id": "13812345678"}
    spans = [
        span("invoke_agent", trace_id=trace_id, span_id=root, attributes=attributes),
        a_tool(trace_id, root, **attributes),
    ]

    response = post(client, export(*spans), key=key)

    assert not response_of(response).HasField("partial_success")
    assert DiagnosisSession.objects.get().session_id == "13812345678"
    stored = Span.objects.values_list("attributes", flat=True)
    assert {attributes["session.id"] for attributes in stored} == {"[redacted]"}


def test_a_hit_count_sent_as_a_string_of_digits_is_read_as_a_number(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span("invoke_agent", trace_id=trace_id, span_id=root),
        a_tool(trace_id, root, **{"diagnosis.hit_count": "3"}),
    ]

    post(client, export(*spans), key=key)

    fact = ToolInvocation.objects.get()
    assert (fact.hit_count, fact.match_level) == (3, "L1")


def test_a_refused_tool_span_leaves_its_tool_out_of_the_catalog(client, key):
    reused = bytes.fromhex("0000000000000002")
    spans = []
    for tool in ("kept_tool", "refused_tool"):  # the second's id names the first's call
        trace_id, root = new_trace_id(), new_span_id()
        named = {"session.id": "s"}
        tool_span = a_tool(trace_id, root, name=tool, **named)
        tool_span.span_id = reused
        agent = span("invoke_agent", trace_id=trace_id, span_id=root, attributes=named)
        spans += [agent, tool_span]

    response = post(client, export(*spans), key=key)

    assert response_of(response).partial_success.rejected_spans == 1
    assert list(ToolCatalogEntry.objects.values_list("tool_name", flat=True)) == ["kept_tool"]


def test_a_tool_name_with_spaces_around_it_is_one_tool_in_the_facts_and_the_catalog(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span("invoke_agent", trace_id=trace_id, span_id=root),
        a_tool(trace_id, root, name="QueryDocs"),
        a_tool(trace_id, root, name="QueryDocs "),
        a_tool(trace_id, root, name=" QueryDocs"),
    ]

    post(client, export(*spans), key=key)

    assert set(ToolInvocation.objects.values_list("tool_name", flat=True)) == {"QueryDocs"}
    assert list(ToolCatalogEntry.objects.values_list("tool_name", flat=True)) == ["QueryDocs"]


def test_two_traces_of_a_session_reusing_a_span_id_in_one_request_keep_the_first_fact(client, key):
    span_id = bytes.fromhex("0000000000000002")
    spans = []
    for tool in ("first_kb", "second_kb"):
        trace_id, root = new_trace_id(), new_span_id()
        spans += [
            span("invoke_agent", trace_id=trace_id, span_id=root, attributes={"session.id": "s"}),
            span(
                f"execute_tool {tool}",
                trace_id=trace_id,
                span_id=span_id,
                parent=root,
                attributes={
                    "session.id": "s",
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "diagnosis.tool.kind": "retrieval",
                    "diagnosis.match_level": "L0",
                },
            ),
        ]

    response = post(client, export(*spans), key=key)

    assert response.status_code == 200, response.content
    partial = response_of(response).partial_success
    assert partial.rejected_spans == 1
    assert "已有同一 ID 的工具调用" in partial.error_message
    assert list(ToolInvocation.objects.values_list("tool_name", flat=True)) == ["first_kb"]
    assert Span.objects.count() == 3


def test_a_later_trace_reusing_a_stored_span_id_is_told_its_span_was_refused(client, key):
    span_id = bytes.fromhex("0000000000000002")
    for tool in ("first_kb", "second_kb"):
        trace_id, root = new_trace_id(), new_span_id()
        response = post(
            client,
            export(
                span(
                    "invoke_agent", trace_id=trace_id, span_id=root, attributes={"session.id": "s"}
                ),
                span(
                    f"execute_tool {tool}",
                    trace_id=trace_id,
                    span_id=span_id,
                    parent=root,
                    attributes={"session.id": "s", "gen_ai.operation.name": "execute_tool"},
                ),
            ),
            key=key,
        )

    assert response_of(response).partial_success.rejected_spans == 1
    assert ToolInvocation.objects.count() == 1


def test_a_root_stored_before_the_span_naming_its_session_brings_its_completion_along(client, key):
    trace_id, root = new_trace_id(), new_span_id()
    post(
        client,
        export(
            span(
                "invoke_agent",
                trace_id=trace_id,
                span_id=root,
                attributes={"input.value": "磁盘满了怎么办", "output.value": "清理日志"},
            )
        ),
        key=key,
    )
    assert DiagnosisSession.objects.get().status == "SUCCESS"  # under the trace id

    post(
        client,
        export(a_tool(trace_id, root, **{"session.id": "ticket-9", "diagnosis.match_level": "L0"})),
        key=key,
    )

    session = DiagnosisSession.objects.get()
    assert session.session_id == "ticket-9"
    assert (session.status, session.query, session.answer) == (
        "SUCCESS",
        "磁盘满了怎么办",
        "清理日志",
    )
    assert Span.objects.filter(session=session).count() == 2
    assert session.self_evaluation["evidence_score"] == 65


def test_a_gzip_body_of_several_members_is_read_whole(client, key):
    trace_id = new_trace_id()
    body = export(
        span("invoke_agent", trace_id=trace_id, attributes={"session.id": "two-members"})
    ).SerializeToString()
    half = len(body) // 2
    members = gzip.compress(body[:half]) + gzip.compress(body[half:])

    response = client.post(
        "/v1/traces",
        data=members,
        content_type="application/x-protobuf",
        HTTP_CONTENT_ENCODING="gzip",
        HTTP_AUTHORIZATION=f"Api-Key {key}",
    )

    assert response.status_code == 200, response.content
    assert DiagnosisSession.objects.get().session_id == "two-members"


def test_a_case_search_made_under_the_trace_id_follows_the_spans_to_the_named_session(
    client, key, api
):
    CaseLibraryFactory(title="Oracle 快照过旧", error_code="ORA-01555")
    case_index_build()
    trace_id, root = new_trace_id(), new_span_id()
    post(client, export(a_tool(trace_id, root)), key=key)  # no name yet: the trace id
    searched = api.post(
        "/api/cases/search",
        {"sessionId": trace_id.hex(), "query": "报表查询报 ORA-01555"},
        format="json",
    )
    assert searched.json()["matchLevel"] == "L0"

    root_span = span(
        "invoke_agent",
        trace_id=trace_id,
        span_id=root,
        attributes={"session.id": "otel-3", "input.value": "q", "output.value": "a"},
    )
    post(client, export(root_span), key=key)

    session = DiagnosisSession.objects.get()  # the placeholder is gone
    assert session.session_id == "otel-3"
    assert session.case_searches.count() == 1
    assert session.self_evaluation["evidence_score"] == 65  # a successful call + the L0 hit


def test_a_session_started_over_rest_takes_its_spans_and_its_case_search(client, key, api):
    CaseLibraryFactory(title="Oracle 快照过旧", error_code="ORA-01555")
    case_index_build()
    api.post("/api/sessions", {"sessionId": "otel-4", "query": "报表报错"}, format="json")
    api.post(
        "/api/cases/search",
        {"sessionId": "otel-4", "query": "报表查询报 ORA-01555"},
        format="json",
    )
    trace_id, root = new_trace_id(), new_span_id()
    named = {"session.id": "otel-4"}

    post(
        client,
        export(
            span("invoke_agent", trace_id=trace_id, span_id=root, attributes={**named}),
            a_tool(trace_id, root, **named),
        ),
        key=key,
    )

    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.query) == ("otel-4", "SUCCESS", "报表报错")
    assert session.self_evaluation["evidence_score"] == 65
