"""The OpenAPI schema describes every endpoint and every response, and validates."""

import pytest
import yaml
from openapi_schema_validator import OAS30Validator
from openapi_schema_validator import validate as validate_instance
from openapi_spec_validator import validate
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("/api/sessions", "post"): {"201", "400", "401", "403", "409", "413", "415"},
    ("/api/sessions", "get"): {"200", "400", "401", "403"},
    ("/api/sessions/{sessionId}", "get"): {"200", "400", "401", "403", "404"},
    ("/api/sessions/{sessionId}/tool-invocations", "post"): {
        "200",
        "201",
        "400",
        "401",
        "403",
        "404",
        "409",
        "413",
        "415",
    },
    ("/api/sessions/{sessionId}/complete", "post"): {
        "200",
        "400",
        "401",
        "403",
        "404",
        "409",
        "413",
        "415",
    },
    ("/api/cases", "get"): {"200", "400", "401", "403"},
    ("/api/cases/{caseId}", "get"): {"200", "401", "403", "404"},
}


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def test_the_schema_is_valid_openapi_3(schema) -> None:
    validate(schema)
    assert schema["openapi"].startswith("3.")


@pytest.mark.parametrize(("path", "method"), sorted(OPERATIONS))
def test_every_endpoint_documents_each_of_its_responses(schema, path, method) -> None:
    operation = schema["paths"][path][method]

    assert OPERATIONS[(path, method)] <= set(operation["responses"])
    assert operation["security"] == [{"ApiKey": []}]


def test_the_schema_is_served_without_a_key_and_the_docs_use_no_cdn() -> None:
    page = APIClient().get("/api/docs").content.decode()

    assert "swagger-ui" in page
    assert "cdn." not in page and "unpkg" not in page


def _response_schema(schema: dict, path: str, method: str, status: str) -> dict:
    content = schema["paths"][path][method]["responses"][status]["content"]
    return {**content["application/json"]["schema"], "components": schema["components"]}


def test_an_unscored_session_as_served_matches_its_schema(schema, make_client) -> None:
    api = make_client("full")
    started = api.post("/api/sessions", {"sessionId": "s-1", "query": "磁盘满了"}, format="json")
    read = api.get("/api/sessions/s-1")

    assert started.json()["selfEvaluation"] is None  # running: not scored
    validate_instance(
        started.json(),
        _response_schema(schema, "/api/sessions", "post", "201"),
        cls=OAS30Validator,
    )
    validate_instance(
        read.json(),
        _response_schema(schema, "/api/sessions/{sessionId}", "get", "200"),
        cls=OAS30Validator,
    )
