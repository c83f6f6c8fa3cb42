"""POST /v1/traces with OTLP JSON whose trace and span ids are base64 (protobuf's own JSON
mapping, which OTLP JSON does not use: its ids are hex): each such span is refused with a
reason that says what OTLP JSON's ids are, not that the span has no valid trace id."""

import json

import pytest
from google.protobuf import json_format

from diagnosis.models import Span
from tests.otlp import JSON, export, new_span_id, new_trace_id, otlp_json, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


def test_spans_with_base64_ids_are_refused_saying_json_ids_are_hex(client, key):
    trace, root = new_trace_id(), new_span_id()
    request = export(
        span("invoke_agent", trace_id=trace, span_id=root),
        span("chat", trace_id=trace, parent=root, attributes={"gen_ai.operation.name": "chat"}),
    )
    document = json_format.MessageToDict(request)  # ids in base64

    response = post(client, json.dumps(document).encode(), key=key, content_type=JSON)

    assert response.status_code == 200, response.content
    partial = response_of(response).partial_success
    assert partial.rejected_spans == 2
    assert "32 个十六进制字符" in partial.error_message
    assert "base64" in partial.error_message
    assert "“invoke_agent”" in partial.error_message and "“chat”" in partial.error_message
    assert "没有有效的 trace id" not in partial.error_message
    assert not Span.objects.exists()


def test_a_span_with_hex_ids_beside_one_with_base64_ids_is_stored(client, key):
    trace, root = new_trace_id(), new_span_id()
    hex_ids = otlp_json(export(span("invoke_agent", trace_id=trace, span_id=root)))
    base64_ids = json_format.MessageToDict(export(span("chat", trace_id=new_trace_id())))
    hex_ids["resourceSpans"] += base64_ids["resourceSpans"]

    response = post(client, json.dumps(hex_ids).encode(), key=key, content_type=JSON)

    partial = response_of(response).partial_success
    assert partial.rejected_spans == 1
    assert "“chat”" in partial.error_message
    assert list(Span.objects.values_list("span_id", flat=True)) == [root.hex()]


def test_an_id_that_is_neither_hex_nor_base64_keeps_its_reason(client, key):
    document = otlp_json(export(span("chat", trace_id=new_trace_id())))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "not an id"

    response = post(client, json.dumps(document).encode(), key=key, content_type=JSON)

    partial = response_of(response).partial_success
    assert partial.rejected_spans == 1
    assert "没有有效的 trace id" in partial.error_message
    assert "base64" not in partial.error_message


def test_the_spans_refused_for_base64_ids_are_listed_under_one_reason(client, key):
    document = json_format.MessageToDict(
        export(*(span(f"chat {n}", trace_id=new_trace_id()) for n in range(3)))
    )

    response = post(client, json.dumps(document).encode(), key=key, content_type=JSON)

    message = response_of(response).partial_success.error_message
    assert message.count("32 个十六进制字符") == 1
    assert message.endswith("(x3)")
