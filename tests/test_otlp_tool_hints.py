"""POST /v1/traces: how a tool span's kind, match level and hit count are read, and what
a hint the service cannot use does. A bad hint never loses the call: it is read as well
as it can be, else ignored, and the answer's partial_success says so (the span is stored,
so it is not counted as rejected)."""

import json
import logging

import pytest

from diagnosis.models import Span, ToolCatalogEntry, ToolInvocation, ToolKind
from tests.otlp import (
    JSON,
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

TWO_DOCUMENTS = '["E1234: 磁盘写满", "检查日志轮转"]'


def a_run(*tools):  # type: ignore[no-untyped-def]
    """An agent span and the given tool spans (made by `tool`) under it."""
    trace_id, root = new_trace_id(), new_span_id()
    agent = span("invoke_agent", trace_id=trace_id, span_id=root, attributes={"session.id": "s"})
    return [agent, *(make(trace_id, root) for make in tools)]


def tool(name: str = "kb", *, span_id: bytes | None = None, error: str | None = None, **attributes):  # type: ignore[no-untyped-def]
    def make(trace_id: bytes, parent: bytes):  # type: ignore[no-untyped-def]
        return span(
            f"execute_tool {name}",
            trace_id=trace_id,
            span_id=span_id,
            parent=parent,
            error=error,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.result": TWO_DOCUMENTS,
                **attributes,
            },
        )

    return make


def retriever(name: str = "kb", **attributes):  # type: ignore[no-untyped-def]
    """An OpenInference RETRIEVER span, as `tool_span_kinds={name: "RETRIEVER"}` makes it."""

    def make(trace_id: bytes, parent: bytes):  # type: ignore[no-untyped-def]
        return span(
            name,
            trace_id=trace_id,
            parent=parent,
            attributes={
                "openinference.span.kind": "RETRIEVER",
                "tool.name": name,
                "output.value": TWO_DOCUMENTS,
                **attributes,
            },
        )

    return make


def the_fact() -> tuple:
    fact = ToolInvocation.objects.get()
    return fact.kind, fact.match_level, fact.hit_count


# --- Kind: the span's attribute, then a RETRIEVER span, then the catalog ----------------


def test_a_retriever_span_of_a_tool_the_catalog_already_holds_as_other_is_retrieval(client, key):
    post(client, export(*a_run(tool("kb"))), key=key)  # first seen: the catalog's `other`
    assert ToolCatalogEntry.objects.get(tool_name="kb").kind == ToolKind.OTHER
    ToolInvocation.objects.all().delete()

    post(client, export(*a_run(retriever("kb"))), key=key)

    assert the_fact() == ("retrieval", "L1", 2)


def test_the_kind_attribute_wins_over_a_retriever_span(client, key):
    post(client, export(*a_run(retriever("kb", **{"diagnosis.tool.kind": "other"}))), key=key)

    assert the_fact() == ("other", None, 2)


def test_the_catalog_still_decides_for_a_plain_tool_span(client, key):
    ToolCatalogEntry.objects.create(tool_name="kb", kind=ToolKind.RETRIEVAL)

    post(client, export(*a_run(tool("kb"))), key=key)

    assert the_fact() == ("retrieval", "L1", 2)


# --- Hints read as well as they can be --------------------------------------------------


@pytest.mark.parametrize(
    ("attributes", "fact"),
    [
        ({"diagnosis.hit_count": 3.0}, ("retrieval", "L1", 3)),
        ({"diagnosis.hit_count": 0.0}, ("retrieval", "NONE", 0)),
        ({"diagnosis.hit_count": " 5 "}, ("retrieval", "L1", 5)),
        ({"diagnosis.match_level": "l0"}, ("retrieval", "L0", 2)),
        ({"diagnosis.match_level": "none"}, ("retrieval", "NONE", 2)),
        ({"diagnosis.tool.kind": "RETRIEVAL"}, ("retrieval", "L1", 2)),
        ({"diagnosis.tool.kind": "Other"}, ("other", None, 2)),
    ],
    ids=["double-3.0", "double-0.0", "digits-in-spaces", "l0", "none", "RETRIEVAL", "Other"],
)
def test_a_hint_in_another_case_or_an_integral_double_is_read_as_meant(
    client, key, attributes, fact
):
    hints = {"diagnosis.tool.kind": "retrieval", **attributes}

    response = post(client, export(*a_run(tool(**hints))), key=key)

    assert not response_of(response).HasField("partial_success")
    assert the_fact() == fact


# --- Any other bad hint is ignored, said, and logged ------------------------------------


@pytest.mark.parametrize(
    ("attributes", "fact", "said"),
    [
        ({"diagnosis.hit_count": True}, ("retrieval", "L1", 2), "diagnosis.hit_count"),
        ({"diagnosis.hit_count": 2.7}, ("retrieval", "L1", 2), "diagnosis.hit_count"),
        ({"diagnosis.hit_count": -5}, ("retrieval", "L1", 2), "diagnosis.hit_count"),
        ({"diagnosis.hit_count": [1, 2]}, ("retrieval", "L1", 2), "diagnosis.hit_count"),
        ({"diagnosis.hit_count": 2**62}, ("retrieval", "L1", 2), "diagnosis.hit_count"),
        ({"diagnosis.hit_count": "three"}, ("retrieval", "L1", 2), "diagnosis.hit_count"),
        ({"diagnosis.match_level": "L9"}, ("retrieval", "L1", 2), "diagnosis.match_level"),
        ({"diagnosis.match_level": 0}, ("retrieval", "L1", 2), "diagnosis.match_level"),
        ({"diagnosis.tool.kind": "weird"}, ("other", None, 2), "diagnosis.tool.kind"),
        ({"diagnosis.tool.kind": 1}, ("other", None, 2), "diagnosis.tool.kind"),
    ],
    ids=[
        "hits-true",
        "hits-2.7",
        "hits-negative",
        "hits-a-list",
        "hits-past-int",
        "hits-words",
        "level-L9",
        "level-a-number",
        "kind-weird",
        "kind-a-number",
    ],
)
def test_a_bad_hint_is_ignored_and_said_and_the_call_is_kept(
    client, key, caplog, attributes, fact, said
):
    span_id = new_span_id()
    hints = {"diagnosis.tool.kind": "retrieval", **attributes}
    spans = a_run(tool(span_id=span_id, **hints))

    with caplog.at_level(logging.WARNING, logger="diagnosis"):
        response = post(client, export(*spans), key=key)

    assert response.status_code == 200, response.content
    partial = response_of(response).partial_success
    assert partial.rejected_spans == 0
    assert span_id.hex() in partial.error_message
    assert said in partial.error_message
    assert the_fact() == fact
    assert Span.objects.count() == 2
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [getattr(r, "span_id", None) for r in warnings] == [span_id.hex()]
    assert said in warnings[0].getMessage()


@pytest.mark.parametrize(
    ("hints", "error", "fact"),
    [
        ({"diagnosis.tool.kind": "retrieval"}, "index offline", ("retrieval", None, 2)),
        ({"diagnosis.tool.kind": "other"}, None, ("other", None, 2)),
        ({}, None, ("other", None, 2)),
    ],
    ids=["failed-call", "other-tool", "tool-not-marked"],
)
def test_a_match_level_where_there_is_none_to_have_is_ignored_and_said(
    client, key, hints, error, fact
):
    span_id = new_span_id()
    spans = a_run(tool(span_id=span_id, error=error, **hints, **{"diagnosis.match_level": "L0"}))

    response = post(client, export(*spans), key=key)

    partial = response_of(response).partial_success
    assert partial.rejected_spans == 0
    assert "diagnosis.match_level" in partial.error_message
    assert the_fact() == fact


def test_a_span_rejected_for_another_reason_is_told_that_reason_alone(client, key):
    reused = bytes.fromhex("0000000000000002")
    retrieval = {"diagnosis.tool.kind": "retrieval"}
    first = a_run(tool("first_kb", span_id=reused, **retrieval))
    second = a_run(tool("second_kb", span_id=reused, **retrieval, **{"diagnosis.hit_count": -1}))

    response = post(client, export(*first, *second), key=key)

    partial = response_of(response).partial_success
    assert partial.rejected_spans == 1  # the second tool span: its id names a call already
    assert "已有同一 ID 的工具调用" in partial.error_message
    assert "diagnosis.hit_count" not in partial.error_message
    assert list(ToolInvocation.objects.values_list("tool_name", flat=True)) == ["first_kb"]


# --- A tool span without a tool name ----------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["execute_tool ", "execute_tool", "", "tool_call  "],
    ids=["trailing", "bare", "empty", "spring"],
)
def test_a_tool_span_without_a_tool_name_is_stored_and_said_not_to_be_evidence(
    client, key, caplog, name
):
    trace_id, root, nameless = new_trace_id(), new_span_id(), new_span_id()
    spans = [
        span("invoke_agent", trace_id=trace_id, span_id=root),
        span(
            name,
            trace_id=trace_id,
            span_id=nameless,
            parent=root,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "  "},
        ),
    ]

    with caplog.at_level(logging.WARNING, logger="diagnosis"):
        response = post(client, export(*spans), key=key)

    partial = response_of(response).partial_success
    assert partial.rejected_spans == 0
    assert nameless.hex() in partial.error_message
    assert "工具名" in partial.error_message
    assert Span.objects.get(span_id=nameless.hex()).role == "tool"
    assert not ToolInvocation.objects.exists()
    assert not ToolCatalogEntry.objects.exists()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [getattr(r, "span_id", None) for r in warnings] == [nameless.hex()]


def test_a_note_comes_back_in_a_valid_otlp_json_answer_with_no_span_rejected(client, key):
    spans = a_run(tool(**{"diagnosis.tool.kind": "retrieval", "diagnosis.hit_count": 2.7}))
    body = json.dumps(otlp_json(export(*spans))).encode()

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 200, response.content
    answer = json.loads(response.content)
    assert set(answer) == {"partialSuccess"}
    assert set(answer["partialSuccess"]) == {"errorMessage"}  # rejectedSpans 0: left out
    assert "diagnosis.hit_count" in answer["partialSuccess"]["errorMessage"]
    assert response_of(response).partial_success.rejected_spans == 0
