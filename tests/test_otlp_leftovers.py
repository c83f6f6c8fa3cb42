"""POST /v1/traces, four edges: NUL characters in any text of a span (attribute keys too),
junk after a whole compressed body, the one warning of a request whose body and spans both
have notes, and a trace whose last spans arrive after a reader rated its session."""

import gzip
import json
import logging
import zlib

import pytest
from django.test import Client
from google.rpc.status_pb2 import Status
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from diagnosis.otlp_placeholders import placeholders_joined
from tests.factories import DiagnosisSessionFactory
from tests.otlp import (
    JSON,
    export,
    kb_tool,
    new_span_id,
    new_trace_id,
    otlp_json,
    post,
    response_of,
    span,
    stored_as_another_request_left_it,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


# --- NUL characters ---------------------------------------------------------------------


def kvlist(**items: AnyValue) -> AnyValue:
    return AnyValue(
        kvlist_value=KeyValueList(values=[KeyValue(key=k, value=v) for k, v in items.items()])
    )


def nested(depth: int) -> AnyValue:
    """A kvlist `depth` levels deep, each level's key holding a NUL: deeper than the stored
    attributes nest, so its inner part is stored as its JSON text."""
    value = AnyValue(string_value="bottom")
    for _ in range(depth):
        value = AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key="le\x00vel", value=value)]))
    return value


def a_run_with_nul_in_keys(trace: bytes, tool_id: bytes):  # type: ignore[no-untyped-def]
    root = new_span_id()
    agent = span(
        "invoke_agent",
        trace_id=trace,
        span_id=root,
        attributes={"session.id": "s-nul-keys", "input.value": "q", "app.ti\x00er": "gold"},
    )
    tool = span(
        "execute_tool kb",
        trace_id=trace,
        span_id=tool_id,
        parent=root,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "kb"},
    )
    tool.attributes.add(key="gen_ai.tool.call.arguments").value.CopyFrom(
        kvlist(**{"q\x00": AnyValue(string_value="disk full")})
    )
    tool.attributes.add(key="deep\x00").value.CopyFrom(nested(20))
    return export(agent, tool)


def every_text_stored() -> str:
    """What the request stored of its spans, sessions and facts, as JSON text: a NUL shows
    in it as the escape JSON writes for it."""
    rows = [
        *Span.objects.values("name", "arguments", "result", "error_message", "attributes"),
        *ToolInvocation.objects.values("tool_name", "query", "error_message"),
        *DiagnosisSession.objects.values("session_id", "query", "answer", "user_id"),
    ]
    return json.dumps(rows, ensure_ascii=False, default=str)


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_nul_characters_are_taken_out_of_attribute_keys_at_every_level(client, key, encoding):
    trace, tool_id = new_trace_id(), new_span_id()
    request = a_run_with_nul_in_keys(trace, tool_id)
    if encoding == "json":
        body = json.dumps(otlp_json(request)).encode()
        response = post(client, body, key=key, content_type=JSON)
    else:
        response = post(client, request, key=key)

    assert response.status_code == 200, response.content
    text = every_text_stored()
    assert "\\u0000" not in text and "\x00" not in text
    agent = Span.objects.get(role="agent")
    assert agent.attributes["app.tier"] == "gold"
    tool = Span.objects.get(span_id=tool_id.hex())
    assert "deep" in tool.attributes
    assert ToolInvocation.objects.get().query == '{"q": "disk full"}'


def test_a_secret_split_by_a_nul_character_is_redacted_once_it_is_taken_out(client, key):
    url = "mysql://root:hunt\x00er2@db/x"
    agent = span("invoke_agent", trace_id=new_trace_id(), attributes={"input.value": url})

    response = post(client, export(agent), key=key)

    assert response.status_code == 200, response.content
    assert "hunter2" not in Span.objects.get().attributes["input.value"]


def test_an_exception_whose_attribute_keys_hold_nul_characters_gives_the_error(client, key):
    agent = span("invoke_agent", trace_id=new_trace_id(), error="")
    exception = agent.events.add(name="exception")
    exception.attributes.add(key="exception.mes\x00sage").value.string_value = "boom"

    response = post(client, export(agent), key=key)

    assert response.status_code == 200, response.content
    assert Span.objects.get().error_message == "boom"


def test_a_session_id_is_read_without_its_nul_characters_as_the_user_id_is(client, key):
    trace = new_trace_id()
    agent = span("invoke_agent", trace_id=trace, attributes={"session.id": "s-\x001"})

    response = post(client, export(agent), key=key)

    assert response.status_code == 200, response.content
    assert not response_of(response).HasField("partial_success")
    assert DiagnosisSession.objects.get().session_id == "s-1"
    assert Span.objects.get().attributes["session.id"] == "s-1"


# --- Junk after a whole compressed body --------------------------------------------------


def raw_deflate(body: bytes) -> bytes:
    deflater = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return deflater.compress(body) + deflater.flush()


COMPRESSED = {
    "deflate-zlib": ("deflate", zlib.compress),
    "deflate-raw": ("deflate", raw_deflate),
    "gzip": ("gzip", gzip.compress),
}


def a_body(trace: bytes) -> bytes:
    return export(
        span("invoke_agent", trace_id=trace, attributes={"session.id": "s-junk"})
    ).SerializeToString()


@pytest.mark.parametrize("junk", [b"junk", b"\x00", b"\x1f\x8bjunk"], ids=["text", "nul", "magic"])
@pytest.mark.parametrize("compressed", list(COMPRESSED))
def test_junk_after_a_whole_compressed_body_is_refused_and_nothing_is_stored(
    client, key, compressed, junk
):
    encoding, compress = COMPRESSED[compressed]
    body = compress(a_body(new_trace_id())) + junk

    response = post(client, body, key=key, HTTP_CONTENT_ENCODING=encoding)

    assert response.status_code == 400, response.content
    message = Status.FromString(response.content).message
    assert encoding in message
    assert "多余" in message, message
    assert not Span.objects.exists()
    assert not DiagnosisSession.objects.exists()


def test_junk_after_a_compressed_json_body_is_answered_in_json(client, key):
    body = json.dumps(otlp_json(export(span("a", trace_id=new_trace_id())))).encode()

    junk = zlib.compress(body) + b"junk"

    response = post(client, junk, key=key, content_type=JSON, HTTP_CONTENT_ENCODING="deflate")

    assert response.status_code == 400
    assert response["Content-Type"].startswith(JSON)
    answer = json.loads(response.content)
    assert answer["code"] == 3
    assert "多余" in answer["message"]
    assert not Span.objects.exists()


def test_two_whole_gzip_members_are_still_one_body(client, key):
    first = gzip.compress(a_body(new_trace_id()))
    # A protobuf body is its fields one after another: two requests' bytes are one request.
    second = gzip.compress(a_body(new_trace_id()))

    response = post(client, first + second, key=key, HTTP_CONTENT_ENCODING="gzip")

    assert response.status_code == 200, response.content
    assert Span.objects.count() == 2


# --- One warning for a request -----------------------------------------------------------

# "中" cut as an SDK cutting at a byte count cuts it: no longer UTF-8, the length kept.
CHAR, CHAR_CUT = "中".encode(), b"\xe4\xb8?"


def test_a_request_with_notes_on_its_body_and_on_its_spans_logs_one_warning(client, key, caplog):
    trace, root, tool_id = new_trace_id(), new_span_id(), new_span_id()
    request = export(
        span("invoke_agent", trace_id=trace, span_id=root, attributes={"final_result": "中"}),
        span(
            "execute_tool kb",
            trace_id=trace,
            span_id=tool_id,
            parent=root,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "kb",
                "diagnosis.tool.kind": "weird",
            },
        ),
    )
    body = request.SerializeToString().replace(CHAR, CHAR_CUT)

    with caplog.at_level(logging.WARNING, logger="diagnosis"):
        response = post(client, body, key=key)

    assert response.status_code == 200, response.content
    told = response_of(response).partial_success.error_message
    assert "U+FFFD" in told and "diagnosis.tool.kind" in told
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    line = warnings[0].getMessage()
    assert "U+FFFD" in line
    assert "diagnosis.tool.kind" in line
    assert line.startswith("2 notes")
    assert warnings[0].span_id == tool_id.hex()


def test_a_request_with_notes_on_its_body_alone_logs_them_in_one_warning(client, key, caplog):
    trace = new_trace_id()
    request = export(span("invoke_agent", trace_id=trace, attributes={"final_result": "中"}))
    body = request.SerializeToString().replace(CHAR, CHAR_CUT)

    with caplog.at_level(logging.WARNING, logger="diagnosis"):
        response = post(client, body, key=key)

    assert response.status_code == 200, response.content
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "U+FFFD" in warnings[0].getMessage()


# --- A trace whose last spans arrive after its session was rated -------------------------

QUESTION, ANSWER = "order-service 504", "payment-gateway pool exhausted: scale it"


def rated(session_id: str, key: str) -> None:
    """The reader rates the session from the chat page, with the token the agent's back end
    read."""
    back_end = Client(HTTP_AUTHORIZATION=f"Api-Key {key}")
    token = back_end.get(f"/api/sessions/{session_id}").json()["feedbackToken"]
    response = Client().post(
        "/api/feedback",
        {"sessionId": session_id, "feedback": "useful"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Feedback {token}",
    )
    assert response.status_code == 200, response.content


def late_spans(trace: bytes, root: bytes, remote: bool):  # type: ignore[no-untyped-def]
    """The rest of the trace, naming a session: a sub-agent's call and its tool (their own
    conversation id), or a tool server's span continuing the trace over HTTP."""
    named = {"gen_ai.conversation.id": "conv-late"}
    chat = span(
        "chat",
        trace_id=trace,
        parent=root,
        attributes={**named, "gen_ai.operation.name": "chat", "output.value": "later words"},
    )
    if remote:
        chat.flags = 0x300
    return [chat, kb_tool(trace, chat.span_id, **named)]


@pytest.mark.parametrize("remote", [False, True], ids=["sub-agent", "remote-parent"])
def test_the_rest_of_a_trace_whose_session_was_rated_joins_that_session(client, key, remote):
    trace, root = new_trace_id(), new_span_id()
    agent = span(
        "invoke_agent",
        trace_id=trace,
        span_id=root,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "input.value": QUESTION,
            "output.value": ANSWER,
        },
    )
    first = post(client, export(agent, kb_tool(trace, root)), key=key)
    assert first.status_code == 200, first.content
    rated(trace.hex(), key)

    response = post(client, export(*late_spans(trace, root, remote)), key=key)

    assert response.status_code == 200, response.content
    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.feedback) == (
        trace.hex(),
        "SUCCESS",
        "useful",
    )
    assert (session.query, session.answer) == (QUESTION, ANSWER)
    assert set(Span.objects.values_list("session_id", flat=True)) == {trace.hex()}
    assert ToolInvocation.objects.filter(session=session).count() == 2


def test_a_session_a_request_at_the_same_time_started_for_the_rest_joins_the_rated_one(client, key):
    trace, root = new_trace_id(), new_span_id()
    agent = span("invoke_agent", trace_id=trace, span_id=root, attributes={"output.value": ANSWER})
    post(client, export(agent, kb_tool(trace, root)), key=key)
    rated(trace.hex(), key)
    # What a request committing at the same time left: the rest of the trace in a session
    # its spans named, which it could not yet see was the trace of a rated session.
    late = DiagnosisSessionFactory(session_id="conv-late", query="")
    stored_as_another_request_left_it(late, trace, name="chat", role="model", parent=root)

    placeholders_joined({trace.hex()})

    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.feedback) == (
        trace.hex(),
        "SUCCESS",
        "useful",
    )
    assert Span.objects.filter(session=session).count() == 3
