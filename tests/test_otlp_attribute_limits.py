"""How many attributes, events and array items a span is read with: as OpenTelemetry SDKs
limit them, the first ones of each (OTLP_MAX_ATTRIBUTES_PER_SPAN, OTLP_MAX_EVENTS_PER_SPAN,
and OTLP_MAX_ATTRIBUTES_PER_REQUEST for a whole request); the rest are dropped before
anything reads them, the span is stored, and the answer says what was dropped. The
attributes the service reads (the session id, the tool's name, its hints...) are read
wherever they are among the span's attributes."""

import json

import pytest
from django.test import Client
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
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

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(make_client) -> str:  # type: ignore[no-untyped-def]
    return make_client("agent").raw_key


@pytest.fixture
def limits(settings):  # type: ignore[no-untyped-def]
    settings.OTLP_MAX_ATTRIBUTES_PER_SPAN = 5
    settings.OTLP_MAX_EVENTS_PER_SPAN = 3
    settings.OTLP_MAX_ATTRIBUTES_PER_REQUEST = 1000
    return settings


def with_filler(item: ProtoSpan, count: int, *, first: bool = True) -> ProtoSpan:
    """`item` with `count` attributes of no value (filler.0 ...), before its own
    attributes (`first`) or after them."""
    own = list(item.attributes)
    filler = [KeyValue(key=f"filler.{index}") for index in range(count)]
    del item.attributes[:]
    item.attributes.extend([*filler, *own] if first else [*own, *filler])
    return item


def sent(client_key: str, request, content_type: str):  # type: ignore[no-untyped-def]
    body = json.dumps(otlp_json(request)).encode() if content_type == JSON else request
    return post(Client(), body, key=client_key, content_type=content_type)


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_a_span_with_more_attributes_than_the_limit_is_stored_with_the_first_ones(
    key, limits, content_type
):
    trace_id = new_trace_id()
    agent = span("invoke_agent", trace_id=trace_id, attributes={"session.id": "many-1"})
    with_filler(agent, 20, first=False)

    response = sent(key, export(agent), content_type)

    assert response.status_code == 200
    stored = Span.objects.get(trace_id=trace_id.hex())
    assert "session.id" in stored.attributes
    fillers = {k for k in stored.attributes if k.startswith("filler.")}
    assert fillers == {"filler.0", "filler.1", "filler.2", "filler.3"}
    answer = response_of(response).partial_success
    assert answer.rejected_spans == 0
    assert "属性 16 个" in answer.error_message
    assert agent.span_id.hex() in answer.error_message


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_the_attributes_the_service_reads_are_read_wherever_they_are_sent(
    key, limits, content_type
):
    trace_id, root = new_trace_id(), new_span_id()
    agent = span(
        "invoke_agent",
        trace_id=trace_id,
        span_id=root,
        attributes={"session.id": "many-2", "user.id": "ops-7", "input.value": "为什么 504？"},
    )
    tool = span(
        "execute_tool search_docs",
        trace_id=trace_id,
        parent=root,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search_docs",
            "gen_ai.tool.call.result": '["doc a", "doc b"]',
            "diagnosis.tool.kind": "retrieval",
            "diagnosis.match_level": "L0",
        },
    )

    response = sent(key, export(with_filler(agent, 50), with_filler(tool, 50)), content_type)

    assert response.status_code == 200
    session = DiagnosisSession.objects.get(session_id="many-2")
    assert session.user_id == "ops-7"
    assert session.query == "为什么 504？"
    fact = ToolInvocation.objects.get(session_id="many-2")
    assert (fact.tool_name, fact.kind, fact.match_level, fact.hit_count) == (
        "search_docs",
        "retrieval",
        "L0",
        2,
    )
    assert Span.objects.get(span_id=tool.span_id.hex()).role == "tool"


def test_a_span_with_more_events_than_the_limit_still_reads_its_exception(key, limits):
    trace_id = new_trace_id()
    agent = span(
        "invoke_agent", trace_id=trace_id, attributes={"session.id": "many-3"}, error="boom"
    )
    for index in range(10):
        agent.events.add(name=f"step {index}", time_unix_nano=agent.start_time_unix_nano)
    exception = agent.events.add(name="exception", time_unix_nano=agent.end_time_unix_nano)
    for index in range(10):
        exception.attributes.add(key=f"filler.{index}")
    exception.attributes.add(key="exception.type", value=AnyValue(string_value="TimeoutError"))
    exception.attributes.add(key="exception.message", value=AnyValue(string_value="db slow"))
    agent.status.code = Status.STATUS_CODE_ERROR

    response = post(Client(), export(agent), key=key)

    assert response.status_code == 200
    assert Span.objects.get(trace_id=trace_id.hex()).error_message == "TimeoutError: db slow"
    message = response_of(response).partial_success.error_message
    assert "事件 7 个" in message  # 11 sent: the first 3 and the exception read


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_an_array_or_kvlist_keeps_its_first_items_at_every_depth(key, limits, content_type):
    trace_id = new_trace_id()
    agent = span("invoke_agent", trace_id=trace_id, attributes={"session.id": "many-4"})
    inner = AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=i) for i in range(9)]))
    kvlist = KeyValueList(values=[KeyValue(key=f"k{i}", value=inner) for i in range(9)])
    agent.attributes.add(key="nested", value=AnyValue(kvlist_value=kvlist))

    response = sent(key, export(agent), content_type)

    assert response.status_code == 200
    stored = Span.objects.get(trace_id=trace_id.hex()).attributes["nested"]
    assert list(stored) == ["k0", "k1", "k2", "k3", "k4"]
    assert stored["k0"] == [0, 1, 2, 3, 4]
    assert "数组或 kvlist" in response_of(response).partial_success.error_message


@pytest.mark.parametrize("bad_among_the_first", [True, False])
def test_a_span_with_too_many_attributes_and_text_not_utf8_is_stored(
    key, limits, bad_among_the_first
):
    trace_id = new_trace_id()
    agent = span("invoke_agent", trace_id=trace_id, attributes={"session.id": "many-8"})
    bad = KeyValue(key="bad", value=AnyValue(string_value="PLACEHOLDER"))
    if bad_among_the_first:
        agent.attributes.append(bad)
    with_filler(agent, 20, first=False)
    if not bad_among_the_first:
        agent.attributes.append(bad)
    body = export(agent).SerializeToString().replace(b"PLACEHOLDER", b"\xe4\xb8 cut 1234")

    response = post(Client(), body, key=key)

    assert response.status_code == 200
    stored = Span.objects.get(trace_id=trace_id.hex())
    assert stored.session_id == "many-8"
    message = response_of(response).partial_success.error_message
    assert "属性 " in message
    assert ("U+FFFD" in message) == bad_among_the_first
    assert (stored.attributes.get("bad") == "\ufffd cut 1234") == bad_among_the_first


def test_a_request_reads_no_more_attributes_than_its_limit_but_every_span_keeps_its_session(
    key, limits
):
    limits.OTLP_MAX_ATTRIBUTES_PER_SPAN = 100
    limits.OTLP_MAX_ATTRIBUTES_PER_REQUEST = 150
    trace_id = new_trace_id()
    spans = [
        with_filler(
            span(
                "invoke_agent",
                trace_id=trace_id,
                attributes={"session.id": f"many-5-{index}"} if index == 0 else {},
            ),
            90,
        )
        for index in range(3)
    ]

    response = post(Client(), export(*spans), key=key)

    assert response.status_code == 200
    stored = Span.objects.filter(trace_id=trace_id.hex()).order_by("started_at", "id")
    assert stored.count() == 3
    assert sum(len(s.attributes) for s in stored) <= 150 + 3
    assert set(stored.values_list("session_id", flat=True)) == {"many-5-0"}
    assert "一次请求" in response_of(response).partial_success.error_message


def test_a_span_within_the_limits_is_told_nothing(key, limits):
    trace_id = new_trace_id()
    agent = span(
        "invoke_agent", trace_id=trace_id, attributes={"session.id": "many-6", "a": [1, 2]}
    )

    response = post(Client(), export(agent), key=key)

    assert response.status_code == 200
    assert not response_of(response).HasField("partial_success")


def test_the_default_limits_are_bounded_and_above_what_sdks_send_by_default(settings):
    # The SDKs' defaults: OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT=128, OTEL_SPAN_EVENT_COUNT_LIMIT=128.
    assert 128 <= settings.OTLP_MAX_ATTRIBUTES_PER_SPAN <= 4096
    assert 128 <= settings.OTLP_MAX_EVENTS_PER_SPAN <= 4096
    assert 512 * 128 <= settings.OTLP_MAX_ATTRIBUTES_PER_REQUEST <= 1_000_000


def test_the_attributes_page_of_a_span_stored_with_huge_attributes_shows_the_first_ones(
    admin_client,
):
    from tests.factories import DiagnosisSessionFactory

    session = DiagnosisSessionFactory(session_id="many-7")
    stored = Span.objects.create(
        session_id="many-7",
        trace_id="ab" * 16,
        span_id="cd" * 8,
        name="invoke_agent",
        role="agent",
        started_at=session.created_at,
        ended_at=session.created_at,
        attributes={
            **{f"key.{index:06d}": "" for index in range(50_000)},
            "huge": list(range(400_000)),
        },
    )

    page = admin_client.get(
        f"/admin/diagnosis/diagnosissession/{session.pk}/spans/{stored.pk}/attributes/"
    ).content.decode()

    assert len(page) < 4_000_000
    assert "key.000000" in page
    assert "key.049999" not in page
    assert "50001" in page.replace(",", "")  # how many there are
