"""POST /v1/traces: a string that is not valid UTF-8 (an SDK cut a character in two) is
stored with U+FFFD for its invalid bytes and said in partial_success; the batch is kept."""

import json

import pytest
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from tests.otlp import JSON, export, new_span_id, new_trace_id, otlp_json, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

# "中" is three bytes in UTF-8 (e4 b8 ad); the body keeps the first two and a "?" for the
# third, as an SDK cutting a string at a byte count leaves it, the body's length unchanged.
CHAR, CHAR_CUT, CHAR_REPAIRED = "中".encode(), b"\xe4\xb8?", "\ufffd?"
SENT = "磁盘满了：中"
REPAIRED = "磁盘满了：\ufffd?"
RESULT = '["E1234: disk full"]'


def a_run(trace_id: bytes, *, session: str, result: str = RESULT, answer: str = SENT):  # type: ignore[no-untyped-def]
    """An agent run of 3 spans: the agent, a retrieval tool and a model call."""
    root = new_span_id()
    common = {"session.id": session}
    return export(
        span(
            "invoke_agent agent",
            trace_id=trace_id,
            span_id=root,
            attributes={**common, "gen_ai.operation.name": "invoke_agent", "final_result": answer},
        ),
        span(
            "execute_tool search_docs",
            trace_id=trace_id,
            parent=root,
            attributes={
                **common,
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_docs",
                "gen_ai.tool.call.result": result,
                "diagnosis.tool.kind": "retrieval",
            },
        ),
        span(
            "chat model",
            trace_id=trace_id,
            parent=root,
            attributes={**common, "gen_ai.operation.name": "chat"},
        ),
    )


def cut(body: bytes, *, strings: int = 1) -> bytes:
    """The body with each "中" cut as an SDK cuts it: same length, no longer UTF-8."""
    assert body.count(CHAR) == strings
    return body.replace(CHAR, CHAR_CUT)


def test_the_cut_body_is_refused_by_the_protobuf_runtime():
    body = cut(a_run(new_trace_id(), session="s-1").SerializeToString())

    with pytest.raises(DecodeError, match="UTF-8"):
        ExportTraceServiceRequest.FromString(body)


def test_a_batch_with_one_string_not_utf8_stores_all_its_spans_with_u_fffd(client, key):
    body = cut(a_run(new_trace_id(), session="s-1").SerializeToString())

    response = post(client, body, key=key)

    assert response.status_code == 200
    assert Span.objects.filter(session_id="s-1").count() == 3
    session = DiagnosisSession.objects.get(session_id="s-1")
    assert session.answer == REPAIRED
    root = Span.objects.get(session_id="s-1", role="agent")
    assert root.attributes["final_result"] == REPAIRED
    answer = response_of(response).partial_success
    assert answer.rejected_spans == 0
    assert "1 处" in answer.error_message
    assert "UTF-8" in answer.error_message
    assert f"span {root.span_id} 属性 final_result" in answer.error_message


def test_each_string_repaired_is_counted(client, key):
    request = a_run(new_trace_id(), session="s-1", result='["E1234: 中"]')
    body = cut(request.SerializeToString(), strings=2)

    response = post(client, body, key=key)

    assert response.status_code == 200
    answer = response_of(response).partial_success
    assert answer.rejected_spans == 0
    assert "2 处" in answer.error_message
    assert Span.objects.filter(session_id="s-1").count() == 3
    assert ToolInvocation.objects.get(session_id="s-1").hit_count == 1


def test_a_cut_string_outside_any_span_is_repaired_too(client, key):
    request = a_run(new_trace_id(), session="s-1", answer="ok")
    request.resource_spans[0].scope_spans[0].scope.name = "instrumentation 中"

    response = post(client, cut(request.SerializeToString()), key=key)

    assert response.status_code == 200
    assert Span.objects.filter(session_id="s-1").count() == 3
    assert "span 之外" in response_of(response).partial_success.error_message


def test_the_session_scores_as_with_the_repaired_text(client, key):
    result = '["E1234: disk full 中"]'
    as_cut = a_run(new_trace_id(), session="s-cut", result=result, answer="ok")
    as_repaired = a_run(
        new_trace_id(),
        session="s-repaired",
        result=result.replace("中", CHAR_REPAIRED),
        answer="ok",
    )

    post(client, cut(as_cut.SerializeToString()), key=key)
    post(client, as_repaired, key=key)

    facts = [ToolInvocation.objects.get(session_id=name) for name in ("s-cut", "s-repaired")]
    assert [(fact.hit_count, fact.match_level) for fact in facts] == [(1, "L1"), (1, "L1")]
    spans = [Span.objects.get(session_id=name, role="tool") for name in ("s-cut", "s-repaired")]
    assert spans[0].result == spans[1].result
    scores = [
        DiagnosisSession.objects.get(session_id=name).self_evaluation["evidence_score"]
        for name in ("s-cut", "s-repaired")
    ]
    assert scores == [50, 50]  # a successful call (+30) and an L1 hit (+20)


def test_a_json_batch_with_bytes_not_utf8_stores_all_its_spans(client, key):
    document = otlp_json(a_run(new_trace_id(), session="s-1"))
    body = cut(json.dumps(document, ensure_ascii=False).encode())

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 200
    assert response["Content-Type"] == JSON
    assert Span.objects.filter(session_id="s-1").count() == 3
    assert DiagnosisSession.objects.get(session_id="s-1").answer == REPAIRED
    answer = response_of(response).partial_success
    assert answer.rejected_spans == 0
    assert "1 处" in answer.error_message
    assert "属性 final_result" in answer.error_message


def test_a_json_escape_of_half_an_emoji_is_repaired(client, key):
    # JSON.stringify writes a lone surrogate as an escape: what a JS SDK cutting "🙂" sends.
    document = otlp_json(a_run(new_trace_id(), session="s-1", answer="ok 中"))
    body = json.dumps(document).encode().replace(b"\\u4e2d", b"\\ud83d")
    assert b"\\ud83d" in body

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 200
    assert DiagnosisSession.objects.get(session_id="s-1").answer == "ok \ufffd"
    assert "UTF-8" in response_of(response).partial_success.error_message


def test_a_json_body_with_a_surrogate_s_utf8_bytes_is_repaired(client, key):
    # CESU-8 (a surrogate's own three bytes, ed a0 bd) is no UTF-8; json.loads passes it.
    document = otlp_json(a_run(new_trace_id(), session="s-1", answer="ok 中"))
    body = json.dumps(document, ensure_ascii=False).encode().replace(CHAR, b"\xed\xa0\xbd")

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 200
    assert DiagnosisSession.objects.get(session_id="s-1").answer.startswith("ok \ufffd")
    assert "UTF-8" in response_of(response).partial_success.error_message


def test_a_json_key_not_utf8_is_repaired_not_an_error(client, key):
    document = otlp_json(a_run(new_trace_id(), session="s-1"))
    document["resourceSpans"][0]["unknown \ud83d"] = 1
    body = json.dumps(document).encode()

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 200
    assert Span.objects.filter(session_id="s-1").count() == 3


def test_a_batch_of_valid_strings_has_no_partial_success(client, key):
    response = post(client, a_run(new_trace_id(), session="s-1"), key=key)

    assert response.status_code == 200
    assert not response_of(response).HasField("partial_success")


def test_a_truncated_body_with_a_string_not_utf8_is_still_400(client, key):
    body = cut(a_run(new_trace_id(), session="s-1").SerializeToString())

    response = post(client, body[: len(body) - 5], key=key)

    assert response.status_code == 400
    assert not DiagnosisSession.objects.exists()
    assert not Span.objects.exists()


def test_a_body_that_is_no_protobuf_is_still_400(client, key):
    response = post(client, b"\xff\xfe garbage \xe4\xb8", key=key)

    assert response.status_code == 400
    assert not Span.objects.exists()


def test_a_json_body_not_utf8_outside_its_strings_is_still_400(client, key):
    body = json.dumps(otlp_json(a_run(new_trace_id(), session="s-1"))).encode()

    response = post(client, b"\xe4\xb8" + body, key=key, content_type=JSON)

    assert response.status_code == 400
    assert response["Content-Type"] == JSON
    assert not Span.objects.exists()
