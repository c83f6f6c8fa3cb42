"""POST /v1/traces refuses what it cannot take with a clear OTLP answer, writing nothing."""

import gzip
import json

import pytest
from django.test import Client
from google.protobuf import json_format
from google.rpc.status_pb2 import Status

from diagnosis.models import DiagnosisSession, Span, ToolCatalogEntry, ToolInvocation
from tests.otlp import JSON, PROTOBUF, export, new_span_id, new_trace_id, otlp_json, post, span

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(make_client) -> str:  # type: ignore[no-untyped-def]
    return make_client("agent").raw_key


@pytest.fixture
def client() -> Client:
    return Client()


def a_run(count: int = 3):  # type: ignore[no-untyped-def]
    trace_id, root = new_trace_id(), new_span_id()
    spans = [span("agent", trace_id=trace_id, span_id=root, attributes={"session.id": "s-1"})]
    spans += [
        span(
            f"execute_tool t{i}",
            trace_id=trace_id,
            parent=root,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": f"t{i}"},
        )
        for i in range(count - 1)
    ]
    return export(*spans)


def nothing_written() -> bool:
    return not (
        DiagnosisSession.objects.exists()
        or Span.objects.exists()
        or ToolInvocation.objects.exists()
        or ToolCatalogEntry.objects.exists()
    )


def status_of(response) -> Status:  # type: ignore[no-untyped-def]
    if response["Content-Type"].startswith(JSON):
        return json_format.Parse(response.content, Status())
    return Status.FromString(response.content)


def test_a_truncated_protobuf_body_is_400(client, key):
    body = a_run().SerializeToString()

    response = post(client, body[: len(body) // 2 + 3], key=key)

    assert response.status_code == 400
    assert "protobuf" in status_of(response).message
    assert nothing_written()


def test_a_wrong_content_type_is_415(client, key):
    response = post(client, b"hello", key=key, content_type="text/plain")

    assert response.status_code == 415
    assert "application/x-protobuf" in status_of(response).message
    assert nothing_written()


def test_a_json_body_that_is_not_json_is_400_in_json(client, key):
    response = post(client, b"{not json", key=key, content_type=JSON)

    assert response.status_code == 400
    assert response["Content-Type"] == JSON
    assert status_of(response).message
    assert nothing_written()


def test_json_spans_with_bad_ids_are_rejected_alone(client, key):
    document = otlp_json(a_run())
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[1]["spanId"] = "not-hex!"
    spans[2]["traceId"] = "abc"

    response = post(client, json.dumps(document).encode(), key=key, content_type=JSON)

    assert response.status_code == 200
    answer = json.loads(response.content)["partialSuccess"]
    assert int(answer["rejectedSpans"]) == 2
    assert "span id" in answer["errorMessage"]
    assert "trace id" in answer["errorMessage"]
    assert Span.objects.count() == 1


def test_spans_without_a_trace_id_are_rejected_and_nothing_else_is_lost(client, key):
    request = a_run()
    request.resource_spans[0].scope_spans[0].spans[1].trace_id = b""

    response = post(client, request, key=key)

    from tests.otlp import response_of

    assert response.status_code == 200
    assert response_of(response).partial_success.rejected_spans == 1
    assert Span.objects.count() == 2


def test_a_gzip_bomb_is_refused_while_decompressing(client, key, settings):
    settings.OTLP_MAX_BODY_BYTES = 1024 * 1024
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024))  # 64 MB of zeros in ~64 KB
    assert len(bomb) < settings.OTLP_MAX_BODY_BYTES

    response = post(client, bomb, key=key, HTTP_CONTENT_ENCODING="gzip")

    assert response.status_code == 413
    assert "1048576" in status_of(response).message
    assert nothing_written()


def test_an_uncompressed_body_over_the_limit_is_refused_without_speaking_of_decompression(
    client, key, settings
):
    settings.OTLP_MAX_BODY_BYTES = 1024

    response = post(client, b"\0" * 2048, key=key)

    assert response.status_code == 413
    message = status_of(response).message
    assert "1024" in message
    assert "解压" not in message
    assert nothing_written()


def test_a_gzip_body_over_the_limit_says_the_limit_is_after_decompression(client, key, settings):
    settings.OTLP_MAX_BODY_BYTES = 1024

    response = post(client, gzip.compress(b"\0" * 4096), key=key, HTTP_CONTENT_ENCODING="gzip")

    assert response.status_code == 413
    assert "解压后上限 1024" in status_of(response).message


def test_a_body_that_is_not_gzip_but_says_so_is_400(client, key):
    response = post(client, b"plain bytes", key=key, HTTP_CONTENT_ENCODING="gzip")

    assert response.status_code == 400
    assert nothing_written()


def test_an_unknown_content_encoding_is_415(client, key):
    response = post(client, a_run(), key=key, HTTP_CONTENT_ENCODING="br")

    assert response.status_code == 415
    assert nothing_written()


def test_ten_thousand_spans_in_one_request_are_refused_whole(client, key):
    response = post(client, a_run(10_000), key=key)

    assert response.status_code == 413
    assert "4096" in status_of(response).message
    assert nothing_written()


def test_a_request_without_a_key_is_401(client):
    response = post(client, a_run(), key=None)

    assert response.status_code == 401
    assert "Api-Key" in status_of(response).message
    assert nothing_written()


def test_a_wrong_key_is_401(client):
    response = post(client, a_run(), key="AAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB")

    assert response.status_code == 401
    assert nothing_written()


@pytest.mark.parametrize(
    "authorization",
    [None, "Api-Key AAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", "Api-Key not-a-key", "Bearer x"],
    ids=["none", "unknown-key", "malformed-key", "another-scheme"],
)
@pytest.mark.parametrize("content_type", [PROTOBUF, JSON], ids=["protobuf", "json"])
def test_a_401_says_the_scheme_in_www_authenticate_as_the_api_does(
    client, authorization, content_type
):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    body = a_run()
    if content_type == JSON:
        body = json.dumps(otlp_json(body)).encode()

    response = post(client, body, key=None, content_type=content_type, **headers)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Api-Key"
    assert response["Content-Type"].startswith(content_type)
    assert status_of(response).code == 16  # UNAUTHENTICATED
    assert nothing_written()


def test_a_refusal_other_than_401_says_no_www_authenticate(client, make_client):
    response = post(client, a_run(), key=make_client("frontend").raw_key)

    assert response.status_code == 403
    assert "WWW-Authenticate" not in response


def test_a_key_without_ingest_scope_is_403(client, make_client):
    frontend = make_client("frontend").raw_key

    response = post(client, a_run(), key=frontend)

    assert response.status_code == 403
    assert nothing_written()


def test_a_request_over_the_rate_limit_is_429_with_retry_after(client, key, settings):
    from django.core.cache import cache

    cache.clear()
    settings.OTLP_RATE_LIMIT = "1/min"
    assert post(client, a_run(), key=key).status_code == 200

    response = post(client, a_run(), key=key)

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    cache.clear()


def test_reading_the_traces_endpoint_with_get_is_405(client):
    assert client.get("/v1/traces").status_code == 405


def test_a_deeply_nested_json_body_is_400(client, key):
    body = b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 400
    assert nothing_written()


def test_a_json_number_of_thousands_of_digits_is_400_saying_so(client, key):
    body = b'{"resourceSpans": [], "x": ' + b"9" * 5000 + b"}"

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 400
    message = status_of(response).message
    assert "数字过长" in message
    assert "sys.set_int_max_str_digits" not in message
    assert nothing_written()


def test_a_json_body_with_a_wrongly_typed_field_is_400(client, key):
    body = b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 12, "traceId": 5}]}]}]}'

    response = post(client, body, key=key, content_type=JSON)

    assert response.status_code == 400
    assert nothing_written()
