"""The OpenAPI schema says what the API serves in the forms client generators read
(openapi-python-client, datamodel-code-generator, openapi-typescript): a nullable object
is a nullable reference, not an enum of null; an enum says its values; a field every
response has is required; a body every operation needs is required."""

import json
from collections.abc import Iterator

import pytest
from openapi_schema_validator import OAS30Validator
from openapi_schema_validator import validate as validate_instance

from tests import test_openapi
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory
from tests.test_openapi import _response_schema

pytestmark = pytest.mark.django_db

NULLABLE_OBJECTS = [
    ("SessionOutput", "selfEvaluation", "SelfEvaluationOutput"),
    ("SessionCompletedOutput", "selfEvaluation", "SelfEvaluationOutput"),
    ("SessionDetailWithTokenOutput", "selfEvaluation", "SelfEvaluationOutput"),
    ("SearchExplainOutput", "nearestSimilar", "NearestSimilarOutput"),
    ("CaseHitExplainOutput", "passage", "PassageOutput"),
]
NULLABLE_ENUMS = [
    ("ToolInvocationInputRequest", "matchLevel", ["L0", "L1", "NONE"]),
    ("ToolInvocationOutput", "matchLevel", ["L0", "L1", "NONE"]),
    ("SessionOutput", "feedback", ["useful", "not_useful"]),
    ("SessionDetailWithTokenOutput", "feedback", ["useful", "not_useful"]),
]
ENUMS = [
    ("CaseOutput", "sourceType", ["AUTO", "MANUAL"]),
    ("SelfEvaluationOutput", "source", ["rule", "llm"]),
]
ALWAYS_PRESENT = [
    ("SessionOutput", {"status", "answer"}),
    ("SessionCompletedOutput", {"status", "answer"}),
    ("SessionDetailWithTokenOutput", {"status", "answer"}),
    ("ToolInvocationOutput", {"kind", "query"}),
]


# The served schema, the fixture tests/test_openapi.py reads it with, taken by name.
schema = test_openapi.schema


def _component(schema: dict, ref: str) -> dict:
    return schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]


def _property(schema: dict, component: str, name: str) -> dict:
    return schema["components"]["schemas"][component]["properties"][name]


def _resolved(schema: dict, node: dict) -> dict:
    """A property's schema, through a reference or a one-part allOf."""
    if "$ref" in node:
        return _resolved(schema, _component(schema, node["$ref"]))
    if "allOf" in node and len(node["allOf"]) == 1:
        return _resolved(schema, node["allOf"][0])
    return node


def _enum_of(schema: dict, node: dict) -> list:
    return _resolved(schema, node).get("enum", [])


def _nodes(node: object) -> Iterator[dict]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


@pytest.mark.parametrize(("component", "name", "target"), NULLABLE_OBJECTS)
def test_a_nullable_object_is_a_nullable_reference_to_it(schema, component, name, target) -> None:
    node = _property(schema, component, name)

    assert node.get("allOf") == [{"$ref": f"#/components/schemas/{target}"}], node
    assert node.get("nullable") is True
    assert "oneOf" not in node


def test_the_schema_has_no_enum_of_null_alone(schema) -> None:
    assert "NullEnum" not in schema["components"]["schemas"]
    assert "#/components/schemas/NullEnum" not in json.dumps(schema)


def test_every_nullable_schema_says_its_type_or_what_it_refers_to(schema) -> None:
    for node in _nodes(schema["components"]["schemas"]):
        if node.get("nullable"):
            assert "type" in node or len(node.get("allOf", [])) == 1, node


@pytest.mark.parametrize(("component", "name", "values"), NULLABLE_ENUMS)
def test_a_nullable_choice_is_a_typed_enum_that_holds_null(schema, component, name, values) -> None:
    node = _property(schema, component, name)

    assert node.get("type") == "string" and node.get("nullable") is True, node
    assert node.get("enum") == [*values, None]


@pytest.mark.parametrize(("component", "name", "values"), ENUMS)
def test_an_output_choice_says_its_values(schema, component, name, values) -> None:
    assert _enum_of(schema, _property(schema, component, name)) == values


@pytest.mark.parametrize("component", ["CaseHitOutput", "NearestSimilarOutput"])
def test_every_case_id_is_a_uuid(schema, component) -> None:
    assert _property(schema, component, "caseId") == {"type": "string", "format": "uuid"}


@pytest.mark.parametrize(("component", "names"), ALWAYS_PRESENT)
def test_every_field_every_response_has_is_required(schema, component, names) -> None:
    assert names <= set(schema["components"]["schemas"][component]["required"])


def test_the_self_evaluation_declares_the_opinion_it_may_hold(schema) -> None:
    evaluation = schema["components"]["schemas"]["SelfEvaluationOutput"]
    opinion = _resolved(schema, evaluation["properties"]["llm_opinion"])

    assert "llm_opinion" not in evaluation["required"]  # absent until formed
    assert list(opinion["properties"]) == ["source", "model", "version", "factors", "created_at"]
    assert _enum_of(schema, opinion["properties"]["source"]) == ["llm", "heuristic"]


def test_a_session_with_an_opinion_as_served_matches_its_schema(schema, api) -> None:
    factors = [
        {"name": name, "value": name != "hallucination_risk", "rationale": "seen"}
        for name in (
            "has_root_cause",
            "has_solution",
            "cites_evidence",
            "actionable_steps",
            "hallucination_risk",
        )
    ]
    DiagnosisSessionFactory(
        session_id="op-1",
        succeeded=True,
        feedback="useful",
        self_evaluation={
            "evidence_score": 65,
            "source": "rule",
            "factors": [{"name": "has_successful_tool_call", "delta": 30, "description": "d"}],
            "rules_version": 3,
            "llm_opinion": {
                "source": "heuristic",
                "model": "heuristic",
                "version": "1",
                "factors": factors,
                "created_at": "2026-12-03T13:05:00.123456+00:00",
            },
        },
    )

    read = api.get("/api/sessions/op-1")

    assert read.status_code == 200
    assert read.json()["selfEvaluation"]["llm_opinion"]["source"] == "heuristic"
    validate_instance(
        read.json(),
        _response_schema(schema, "/api/sessions/{sessionId}", "get", "200"),
        cls=OAS30Validator,
    )


def test_a_case_as_served_matches_its_schema(schema, api) -> None:
    case = CaseLibraryFactory()

    read = api.get(f"/api/cases/{case.case_id}")

    assert read.status_code == 200
    validate_instance(
        read.json(),
        _response_schema(schema, "/api/cases/{caseId}", "get", "200"),
        cls=OAS30Validator,
    )


@pytest.mark.parametrize("path", ["/api/sessions/{sessionId}/tool-invocations", "/api/feedback"])
def test_a_body_the_operation_needs_is_required(schema, path) -> None:
    assert schema["paths"][path]["post"]["requestBody"]["required"] is True


def test_every_operation_whose_body_is_required_refuses_a_request_without_one(schema, api) -> None:
    DiagnosisSessionFactory(session_id="s-1")
    bodies = {
        path: operation["requestBody"]
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method == "post" and "requestBody" in operation
    }

    assert len(bodies) == 6  # every POST but feedback-token's, which takes no body
    for path, body in bodies.items():
        assert body.get("required") is True, path
        url = path.replace("{sessionId}", "s-1")
        response = api.post(url, content_type="application/json")
        assert response.status_code == 400, (path, response.status_code)
