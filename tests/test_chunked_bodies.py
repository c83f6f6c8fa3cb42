"""A request body sent without Content-Length (Transfer-Encoding: chunked, as HTTP clients
stream a body or a gzip exporter sends one) is read whole under gunicorn, and one over the
limit is 413, as a body of declared length is: Django reads as many bytes as the request
declares, and read such a body as empty (the feedback API answered "缺少 sessionId")."""

import gzip
import http.client
import json
from urllib.parse import urlsplit

import pytest

from caselibrary.models import CaseLibrary
from diagnosis.models import ApiKey, DiagnosisSession
from tests.factories import DiagnosisSessionFactory, FaultCategoryFactory
from tests.otlp import export, new_span_id, new_trace_id, span
from tests.processes import child_env, start_gunicorn, stop_group

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def post_in_chunks(base: str, path: str, body: bytes, **headers: str) -> tuple[int, bytes]:
    """POST `body` in 1 KB chunks with no Content-Length; (status, response body)."""
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        chunks = iter([body[at : at + 1024] for at in range(0, len(body), 1024)])
        connection.request("POST", path, body=chunks, headers=headers, encode_chunked=True)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture
def serve():  # type: ignore[no-untyped-def]
    servers = []

    def start(**env: str) -> str:
        server, base = start_gunicorn(child_env(**env), workers=1)
        servers.append(server)
        return base

    yield start
    for server in servers:
        stop_group(server)


def key(scope: str) -> str:
    return ApiKey.objects.create_key(name=f"chunked-{scope}", scope=scope)[1]


def test_feedback_sent_in_chunks_is_recorded(serve) -> None:
    FaultCategoryFactory(code="GENERAL")
    DiagnosisSessionFactory(session_id="chunked-1", succeeded=True)
    base = serve()

    status, body = post_in_chunks(
        base,
        "/api/feedback",
        json.dumps({"sessionId": "chunked-1", "feedback": "useful"}).encode(),
        **{"Content-Type": "application/json", "Authorization": f"Api-Key {key('full')}"},
    )

    assert status == 200, body
    case = CaseLibrary.objects.get(diagnosis_id="chunked-1")
    assert json.loads(body) == {"success": True, "message": "反馈已记录", "caseId": case.case_id}


def test_a_chunked_body_over_the_limit_is_413_and_writes_nothing(serve) -> None:
    base = serve(API_MAX_BODY_BYTES="1024")
    query = "磁盘满了" * 400  # 4,800 bytes of UTF-8

    status, body = post_in_chunks(
        base,
        "/api/sessions",
        json.dumps({"sessionId": "too-big", "query": query}, ensure_ascii=False).encode(),
        **{"Content-Type": "application/json", "Authorization": f"Api-Key {key('full')}"},
    )

    assert status == 413, body
    assert json.loads(body)["code"] == "payload_too_large"
    assert not DiagnosisSession.objects.exists()


def test_gzipped_spans_sent_in_chunks_are_stored(serve) -> None:
    base = serve()
    trace, root = new_trace_id(), new_span_id()
    spans = export(
        span(
            "invoke_agent",
            trace_id=trace,
            span_id=root,
            attributes={
                "gen_ai.conversation.id": "chunked-otlp",
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": "磁盘为什么满了？",
                "gen_ai.output.messages": "清理磁盘。",
            },
        )
    )

    status, body = post_in_chunks(
        base,
        "/v1/traces",
        gzip.compress(spans.SerializeToString()),
        **{
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
            "Authorization": f"Api-Key {key('agent')}",
        },
    )

    assert status == 200, body
    assert DiagnosisSession.objects.filter(session_id="chunked-otlp").exists()
