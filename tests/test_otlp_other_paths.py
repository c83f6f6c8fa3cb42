"""What an OTLP exporter pointed at the service's base (OTEL_EXPORTER_OTLP_ENDPOINT) gets
on the paths that take no traces: a google.rpc.Status 404 in the request's encoding that
says where traces go, not Django's HTML page."""

import json

import pytest
from google.rpc.status_pb2 import Status

from tests.otlp import JSON, PROTOBUF, export, new_trace_id, span

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/v1/metrics", "/v1/logs", "/v1/metrics/", "/v1/traces/"])
def test_a_protobuf_export_to_another_path_is_a_status_404(client, path):
    body = export(span("x", trace_id=new_trace_id())).SerializeToString()

    response = client.post(path, data=body, content_type=PROTOBUF)

    assert response.status_code == 404
    assert response["Content-Type"] == PROTOBUF
    status = Status.FromString(response.content)
    assert status.code == 5  # NOT_FOUND
    assert "/v1/traces" in status.message


def test_a_json_export_of_logs_is_told_only_traces_are_taken(client):
    response = client.post("/v1/logs", data="{}", content_type=JSON)

    assert response.status_code == 404
    assert response["Content-Type"] == JSON
    status = json.loads(response.content)
    assert status["code"] == 5
    assert "logs" in status["message"]
    assert "/v1/traces" in status["message"]


def test_the_trailing_slash_is_told_the_path_without_it(client):
    response = client.post("/v1/traces/", data=b"", content_type="text/plain")

    assert response.status_code == 404
    assert response["Content-Type"] == JSON
    assert "/v1/traces" in json.loads(response.content)["message"]
