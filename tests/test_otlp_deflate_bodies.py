"""POST /v1/traces: a body sent with `Content-Encoding: deflate`, as the Python SDK's
exporter sends it with OTEL_EXPORTER_OTLP_COMPRESSION=deflate (zlib's format, RFC 1950),
or as raw deflate (RFC 1951, which some clients send under that name), is read as a gzip
body is: with the same limit on what it inflates to, found while inflating."""

import zlib

import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.common.http import Compression, _OTLPHTTPClient

from diagnosis.models import DiagnosisSession, Span
from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db


def a_run():  # type: ignore[no-untyped-def]
    trace, root = new_trace_id(), new_span_id()
    return export(
        span("invoke_agent", trace_id=trace, span_id=root, attributes={"session.id": "s-1"}),
        span(
            "execute_tool kb",
            trace_id=trace,
            parent=root,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "kb"},
        ),
    )


def as_the_sdk_sends_it(body: bytes) -> tuple[bytes, str]:
    """The body and Content-Encoding of opentelemetry-exporter-otlp-proto-http's client
    with OTEL_EXPORTER_OTLP_COMPRESSION=deflate."""
    sdk = _OTLPHTTPClient(None, "", "spans", compression=Compression.DEFLATE)  # type: ignore[arg-type]
    return sdk._compress(body), sdk._headers["Content-Encoding"]


def raw_deflate(body: bytes) -> bytes:
    deflater = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return deflater.compress(body) + deflater.flush()


def status_of(response) -> Status:  # type: ignore[no-untyped-def]
    return Status.FromString(response.content)


def test_a_body_deflated_as_the_python_sdk_sends_it_is_stored(client, key):
    body, encoding = as_the_sdk_sends_it(a_run().SerializeToString())

    response = post(client, body, key=key, HTTP_CONTENT_ENCODING=encoding)

    assert response.status_code == 200, response.content
    assert Span.objects.count() == 2
    assert DiagnosisSession.objects.get().status == "SUCCESS"


def test_a_raw_deflate_body_is_stored(client, key):
    body = raw_deflate(a_run().SerializeToString())

    response = post(client, body, key=key, HTTP_CONTENT_ENCODING="Deflate")

    assert response.status_code == 200, response.content
    assert Span.objects.count() == 2


@pytest.mark.parametrize("deflate", [zlib.compress, raw_deflate], ids=["zlib", "raw"])
def test_a_deflate_bomb_is_refused_while_inflating(client, key, settings, deflate):
    settings.OTLP_MAX_BODY_BYTES = 1024 * 1024
    bomb = deflate(b"\0" * (64 * 1024 * 1024))
    assert len(bomb) < settings.OTLP_MAX_BODY_BYTES

    response = post(client, bomb, key=key, HTTP_CONTENT_ENCODING="deflate")

    assert response.status_code == 413
    assert "解压后上限 1048576" in status_of(response).message
    assert not Span.objects.exists()


@pytest.mark.parametrize(
    "body",
    [b"plain bytes", zlib.compress(b"x" * 1000)[:-8]],
    ids=["not-deflate", "cut-short"],
)
def test_a_body_that_is_not_whole_deflate_but_says_so_is_400(client, key, body):
    response = post(client, body, key=key, HTTP_CONTENT_ENCODING="deflate")

    assert response.status_code == 400
    assert "deflate" in status_of(response).message
    assert not Span.objects.exists()
