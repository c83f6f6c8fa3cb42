"""POST /v1/traces, OTLP JSON: a field name (an object's key) holding a lone surrogate
(`"na\\ud800me"`) is repaired with U+FFFD and is then no OTLP field: it is ignored, as the
OpenTelemetry Collector ignores an unknown field, and the answer says so. A span still
valid without it is stored; one that is not (its trace or span id lost) is rejected, and
the answer never says it was stored."""

import json

import pytest

from diagnosis.models import Span, ToolInvocation
from tests.otlp import JSON, export, new_span_id, new_trace_id, otlp_json, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)
from tests.test_otlp_bad_input import nothing_written

pytestmark = pytest.mark.django_db

STORED = "已存入"


def a_run() -> dict:
    """The OTLP JSON of an agent run in session s-1: the agent and a tool under it."""
    trace_id, root = new_trace_id(), new_span_id()
    request = export(
        span(
            "invoke_agent agent",
            trace_id=trace_id,
            span_id=root,
            attributes={"session.id": "s-1", "final_result": "ok"},
        ),
        span(
            "execute_tool search_docs",
            trace_id=trace_id,
            parent=root,
            attributes={
                "session.id": "s-1",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_docs",
            },
        ),
    )
    document = otlp_json(request)
    document["resourceSpans"][0]["resource"] = {
        "attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]
    }
    return document


def spans_of(document: dict) -> list[dict]:
    return document["resourceSpans"][0]["scopeSpans"][0]["spans"]


def renamed(item: dict, name: str, damaged: str) -> None:
    """`item` with its field `name` sent as `damaged`, in the same place."""
    fields = list(item.items())
    item.clear()
    item.update((damaged if key == name else key, value) for key, value in fields)


def sent(client, key, document: dict):  # type: ignore[no-untyped-def]
    body = json.dumps(document).encode()
    assert b"\\ud800" in body  # a JSON escape of half a character, as JSON.stringify writes it
    response = post(client, body, key=key, content_type=JSON)
    assert response.status_code == 200
    assert response["Content-Type"] == JSON
    return response_of(response).partial_success


def test_a_damaged_span_field_name_is_ignored_and_the_span_stored_without_it(client, key):
    document = a_run()
    agent = spans_of(document)[0]
    renamed(agent, "name", "na\ud800me")

    answer = sent(client, key, document)

    assert Span.objects.filter(session_id="s-1").count() == 2
    assert Span.objects.get(span_id=agent["spanId"]).name == "(unnamed)"
    assert answer.rejected_spans == 0
    assert STORED in answer.error_message
    assert "na\ufffdme" in answer.error_message
    assert f"span {agent['spanId']}" in answer.error_message
    assert "已忽略" in answer.error_message


def test_a_span_whose_trace_id_field_name_is_damaged_is_rejected_not_told_stored(client, key):
    document = a_run()
    tool = spans_of(document)[1]
    renamed(tool, "traceId", "trace\ud800Id")

    answer = sent(client, key, document)

    assert list(Span.objects.values_list("role", flat=True)) == ["agent"]
    assert not ToolInvocation.objects.exists()
    assert answer.rejected_spans == 1
    assert "trace id" in answer.error_message
    assert "trace\ufffdId" in answer.error_message
    assert STORED not in answer.error_message


def test_a_lone_span_whose_span_id_field_name_is_damaged_writes_nothing(client, key):
    document = a_run()
    document["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans_of(document)[:1]
    renamed(spans_of(document)[0], "spanId", "span\ud800Id")

    answer = sent(client, key, document)

    assert nothing_written()
    assert answer.rejected_spans == 1
    assert "span id" in answer.error_message
    assert "span\ufffdId" in answer.error_message
    assert STORED not in answer.error_message


def test_a_string_repaired_in_a_rejected_span_is_not_told_stored(client, key):
    document = a_run()
    tool = spans_of(document)[1]
    renamed(tool, "spanId", "span\ud800Id")
    tool["name"] = "execute_tool search\ud800docs"

    answer = sent(client, key, document)

    assert Span.objects.count() == 1
    assert answer.rejected_spans == 1
    assert STORED not in answer.error_message


def test_a_string_repaired_in_a_span_refused_for_its_call_id_is_not_told_stored(
    client, key, caplog
):
    caplog.set_level("INFO", logger="diagnosis.otlp_services")
    document = a_run()
    again = a_run()  # a second run of the session, its tool span sent with a used id
    spans_of(again)[1]["spanId"] = spans_of(document)[1]["spanId"]
    spans_of(again)[1]["name"] = "execute_tool search\ud800docs"
    spans_of(document).extend(spans_of(again))

    answer = sent(client, key, document)

    assert Span.objects.count() == 3
    assert answer.rejected_spans == 1
    assert "已有同一 ID 的工具调用" in answer.error_message
    assert STORED not in answer.error_message  # the repaired name was in the span refused
    (received,) = [r for r in caplog.records if r.getMessage() == "spans received"]
    assert (received.stored, received.duplicates, received.rejected) == (3, 0, 1)


def test_a_damaged_attribute_key_value_is_repaired_and_stored(client, key):
    document = a_run()
    agent = spans_of(document)[0]
    agent["attributes"][1]["key"] = "final\ud800result"

    answer = sent(client, key, document)

    stored = Span.objects.get(span_id=agent["spanId"])
    assert stored.attributes["final\ufffdresult"] == "ok"
    assert Span.objects.count() == 2
    assert answer.rejected_spans == 0
    assert STORED in answer.error_message
    assert "属性 final\ufffdresult" in answer.error_message


def test_a_damaged_field_name_of_an_attribute_is_ignored_and_the_span_stored(client, key):
    document = a_run()
    agent = spans_of(document)[0]
    renamed(agent["attributes"][1], "value", "val\ud800ue")

    answer = sent(client, key, document)

    assert Span.objects.count() == 2
    assert Span.objects.get(span_id=agent["spanId"]).attributes["session.id"] == "s-1"
    assert answer.rejected_spans == 0
    assert "val\ufffdue" in answer.error_message
    assert "已忽略" in answer.error_message


def test_a_damaged_resource_field_name_is_ignored_and_the_spans_stored(client, key):
    document = a_run()
    renamed(document["resourceSpans"][0]["resource"], "attributes", "attri\ud800butes")

    answer = sent(client, key, document)

    assert Span.objects.filter(session_id="s-1").count() == 2
    assert answer.rejected_spans == 0
    assert "attri\ufffdbutes" in answer.error_message
    assert "span 之外" in answer.error_message


# The fields above the spans, each by the path to the object holding it.
ABOVE_THE_SPANS = [
    ((), "resourceSpans"),
    (("resourceSpans", 0), "scopeSpans"),
    (("resourceSpans", 0, "scopeSpans", 0), "spans"),
]


def damaged_above_the_spans(document: dict, path: tuple, name: str) -> None:
    """The field `name` of the object at `path` sent with half a character in its name."""
    holder = document
    for step in path:
        holder = holder[step]
    renamed(holder, name, name[:2] + "\ud800" + name[2:])


@pytest.mark.parametrize("path, name", ABOVE_THE_SPANS)
def test_spans_lost_with_a_damaged_field_name_above_them_are_rejected(client, key, path, name):
    document = a_run()
    damaged_above_the_spans(document, path, name)

    answer = sent(client, key, document)

    assert nothing_written()
    assert answer.rejected_spans == 2
    assert name[:2] + "\ufffd" + name[2:] in answer.error_message
    assert STORED not in answer.error_message


@pytest.mark.parametrize("path, name", ABOVE_THE_SPANS)
def test_every_span_lost_above_is_rejected_whatever_its_own_fields(client, key, path, name):
    document = a_run()
    agent, tool = spans_of(document)
    for field in ("traceId", "spanId", "startTimeUnixNano"):
        del agent[field]  # a span with no ids at all
    renamed(tool, "traceId", "tr\ud800aceId")  # its own field names damaged too
    damaged_above_the_spans(document, path, name)

    answer = sent(client, key, document)

    assert nothing_written()
    assert answer.rejected_spans == 2
    assert STORED not in answer.error_message


def test_a_damaged_field_name_inside_a_resource_attribute_loses_no_span(client, key):
    document = a_run()
    resource = document["resourceSpans"][0]["resource"]
    resource["attributes"].append(
        {
            "key": "host.names",
            "value": {"arr\ud800ayValue": {"values": [{"stringValue": "node-1"}]}},
        }
    )

    answer = sent(client, key, document)

    assert Span.objects.count() == 2
    assert answer.rejected_spans == 0
    assert "arr\ufffdayValue" in answer.error_message


def test_a_damaged_field_name_of_a_link_loses_no_span(client, key):
    document = a_run()
    agent = spans_of(document)[0]
    agent["links"] = [{"traceId": agent["traceId"], "span\ud800Id": new_span_id().hex()}]

    answer = sent(client, key, document)

    assert Span.objects.count() == 2
    assert answer.rejected_spans == 0
    assert "span\ufffdId" in answer.error_message


def field_names(node, path=()):  # type: ignore[no-untyped-def]
    """The path of every object of `node` and each of its field names."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from field_names(item, (*path, index))
    elif isinstance(node, dict):
        for name, value in node.items():
            yield path, name
            yield from field_names(value, (*path, name))


def test_every_damaged_field_name_leaves_each_span_stored_or_rejected(client, key):
    for path, name in list(field_names(a_run())):
        document = a_run()
        trace_id = spans_of(document)[0]["traceId"]
        holder = document
        for step in path:
            holder = holder[step]
        renamed(holder, name, name[:1] + "\ud800" + name[1:])

        answer = sent(client, key, document)

        stored = Span.objects.filter(trace_id=trace_id).count()
        assert stored + answer.rejected_spans == 2, (path, name, answer.error_message)
        assert name[:1] + "\ufffd" + name[1:] in answer.error_message, (path, name)
        if not stored:
            assert STORED not in answer.error_message, (path, name)
