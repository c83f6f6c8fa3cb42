"""A path with repeated slashes that is an API or OTLP path once they are collapsed gets
that endpoint's 404 (the API's JSON, OTLP's google.rpc.Status), not Django's HTML page;
and the probes answer GET and HEAD only, any other method 405 as /metrics does."""

import json

import pytest
from google.rpc.status_pb2 import Status

pytestmark = pytest.mark.django_db

PROTOBUF = "application/x-protobuf"


@pytest.mark.parametrize("path", ["//api/sessions", "/api//sessions", "//api//cases/"])
def test_an_api_path_with_repeated_slashes_is_the_apis_json_404(client, path) -> None:
    unknown = client.get("/api/unknown")

    response = client.get(f"http://testserver{path}")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == unknown.json()


@pytest.mark.parametrize("path", ["//v1/traces", "/v1//traces", "//v1//traces//", "/v1//logs"])
def test_an_otlp_path_with_repeated_slashes_is_otlps_404_in_protobuf(client, path) -> None:
    response = client.post(f"http://testserver{path}", data=b"\x0a\x00", content_type=PROTOBUF)

    assert response.status_code == 404
    assert response["Content-Type"] == PROTOBUF
    status = Status.FromString(response.content)
    assert status.code == 5  # NOT_FOUND
    assert "/v1/traces" in status.message


def test_an_otlp_path_with_repeated_slashes_is_otlps_404_in_json(client) -> None:
    response = client.post("/v1//traces", data=b"{}", content_type="application/json")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content)["code"] == 5


def test_another_path_with_repeated_slashes_is_still_djangos_page(client) -> None:
    response = client.get("http://testserver//no-such-page")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("probe", ["/healthz", "/readyz"])
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "options"])
def test_a_probe_answers_any_method_but_get_and_head_with_405(client, probe, method) -> None:
    metrics = client.post("/metrics")

    response = getattr(client, method)(probe)

    assert response.status_code == 405
    assert response["Allow"] == metrics["Allow"] == "GET, HEAD"
    assert response.json() == metrics.json()


@pytest.mark.parametrize("probe", ["/healthz", "/readyz"])
@pytest.mark.parametrize("method", ["get", "head"])
def test_a_probe_still_answers_get_and_head(client, probe, method) -> None:
    response = getattr(client, method)(probe)

    assert response.status_code == 200
    assert "Allow" not in response
