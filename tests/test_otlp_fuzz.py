"""Whatever arrives on /v1/traces, the answer is an OTLP one and never a 500."""

import json

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.otlp import JSON, export, new_span_id, new_trace_id, otlp_json, post, span

pytestmark = pytest.mark.django_db

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=12), children, max_size=3)
    ),
    max_leaves=12,
)
FIELDS = [
    "traceId",
    "spanId",
    "parentSpanId",
    "name",
    "startTimeUnixNano",
    "endTimeUnixNano",
    "attributes",
    "status",
    "kind",
    "events",
    "flags",
]


@pytest.fixture(scope="module")
def base_document() -> dict:
    trace_id, root = new_trace_id(), new_span_id()
    return otlp_json(
        export(
            span("agent", trace_id=trace_id, span_id=root, attributes={"session.id": "fuzz"}),
            span(
                "execute_tool t",
                trace_id=trace_id,
                parent=root,
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
            ),
        )
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(field=st.sampled_from(FIELDS), index=st.integers(0, 1), value=json_values)
def test_a_json_span_with_any_value_in_any_field_gets_an_otlp_answer(
    make_client, base_document, field, index, value
):
    key = make_client("agent").raw_key
    document = json.loads(json.dumps(base_document))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][index][field] = value

    response = post(Client(), json.dumps(document).encode(), key=key, content_type=JSON)

    assert response.status_code in (200, 400), response.content
    assert response["Content-Type"] == JSON


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# (Django's test client sends no Content-Type with an empty body.)
@given(body=st.binary(min_size=1, max_size=300))
def test_any_protobuf_bytes_get_an_otlp_answer(make_client, body):
    key = make_client("agent").raw_key

    response = post(Client(), body, key=key)

    assert response.status_code in (200, 400), response.content
