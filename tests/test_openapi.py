"""The OpenAPI schema describes every endpoint and every response, and validates."""

import uuid

import pytest
import yaml
from django.core.cache import cache
from openapi_schema_validator import OAS30Validator
from openapi_schema_validator import validate as validate_instance
from openapi_spec_validator import validate
from rest_framework.test import APIClient

from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory
from tests.test_outages import UNREACHABLE_CACHE

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("/api/sessions", "post"): {"201", "400", "401", "403", "405", "409", "413", "415", "503"},
    ("/api/sessions", "get"): {"200", "400", "401", "403", "503"},
    ("/api/sessions/{sessionId}", "get"): {"200", "400", "401", "403", "404", "503"},
    ("/api/sessions/{sessionId}/tool-invocations", "post"): {
        "200",
        "201",
        "400",
        "401",
        "403",
        "404",
        "405",
        "409",
        "413",
        "415",
        "503",
    },
    ("/api/sessions/{sessionId}/feedback-token", "post"): {
        "200",
        "400",
        "401",
        "403",
        "404",
        "405",
        "413",
        "503",
    },
    ("/api/sessions/{sessionId}/complete", "post"): {
        "200",
        "400",
        "401",
        "403",
        "404",
        "405",
        "409",
        "413",
        "415",
        "503",
    },
    ("/api/cases", "get"): {"200", "400", "401", "403", "503"},
    ("/api/cases", "post"): {"201", "400", "401", "403", "404", "405", "409", "413", "415", "503"},
    ("/api/cases/{caseId}", "get"): {"200", "401", "403", "404", "503"},
    ("/api/cases/search", "post"): {
        "200",
        "400",
        "401",
        "403",
        "404",
        "405",
        "409",
        "413",
        "415",
        "503",
    },
    ("/api/feedback", "post"): {
        "200",
        "400",
        "401",
        "403",
        "404",
        "405",
        "409",
        "413",
        "415",
        "429",
        "503",
    },
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
    assert {"ApiKey": []} in operation["security"]


def test_every_operation_in_the_schema_is_checked_here(schema) -> None:
    served = {(path, method) for path, ops in schema["paths"].items() for method in ops}

    assert served == set(OPERATIONS)


@pytest.mark.parametrize(("path", "method"), sorted(OPERATIONS))
def test_every_503_and_429_documents_when_to_retry(schema, path, method) -> None:
    responses = schema["paths"][path][method]["responses"]

    for status in {"429", "503"} & set(responses):
        header = responses[status]["headers"]["Retry-After"]
        assert header["required"] is True
        assert header["schema"]["type"] == "integer"


def test_the_schema_is_served_without_a_key_and_the_docs_use_no_cdn() -> None:
    page = APIClient().get("/api/docs").content.decode()

    assert "swagger-ui" in page
    assert "cdn." not in page and "unpkg" not in page


def _response_schema(schema: dict, path: str, method: str, status: str) -> dict:
    """The documented body of one response, as a strict client reads it: an object may hold
    only the properties the schema declares (a field it does not know is refused)."""
    content = schema["paths"][path][method]["responses"][status]["content"]
    return _closed({**content["application/json"]["schema"], "components": schema["components"]})


def _closed(node: object) -> object:
    if isinstance(node, dict):
        node = {key: _closed(value) for key, value in node.items()}
        if "properties" in node:
            node.setdefault("additionalProperties", False)
    elif isinstance(node, list):
        node = [_closed(value) for value in node]
    return node


def assert_served_as_documented(schema: dict, path: str, method: str, response) -> None:  # type: ignore[no-untyped-def]
    """The response's body and headers are what the schema documents for its status."""
    status = str(response.status_code)
    documented = schema["paths"][path][method]["responses"][status]
    validate_instance(
        response.json(), _response_schema(schema, path, method, status), cls=OAS30Validator
    )
    for name, header in documented.get("headers", {}).items():
        if header.get("required"):
            assert response.has_header(name), f"{method} {path} {status}: no {name}"
        if response.has_header(name):
            value = response[name]
            if header["schema"].get("type") == "integer":
                value = int(value)
            validate_instance(value, header["schema"], cls=OAS30Validator)


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


def test_a_search_of_an_empty_library_as_served_matches_its_schema(schema, api) -> None:
    answer = api.post(
        "/api/cases/search", {"query": "Kafka consumer lag", "explain": True}, format="json"
    )

    assert answer.status_code == 200
    assert answer.json()["explain"]["nearestSimilar"] is None  # nothing came near
    assert_served_as_documented(schema, "/api/cases/search", "post", answer)


def test_a_search_as_served_matches_its_schema_with_explain_and_without(schema, api) -> None:
    CaseLibraryFactory(
        title="Kafka consumer lag keeps growing after a rebalance storm",
        root_cause="Consumers exceed max.poll.interval.ms, so the group rebalances again.",
        solution="Lower max.poll.records; raise max.poll.interval.ms.",
    )
    CaseLibraryFactory(
        title="MySQL 锁等待超时导致下单失败",
        error_code="ERROR 1205",
        root_cause="长事务持有行锁不释放。",
        solution="kill 长事务的连接，拆分大事务。",
    )
    CaseLibraryFactory(
        title="Office printer out of paper",
        root_cause="The third-floor printer (asset xylophone) ran out of paper.",
        solution="Refill the tray.",
    )
    case_index_build()
    questions = [
        {"query": "consumer group lag growing after rebalances", "explain": True},  # L1
        {"query": "下单报 ERROR 1205", "explain": True},  # L0
        {"query": "how do we rotate the certificate of the ingress", "explain": True},  # NONE
        {"query": "consumer group lag growing after rebalances"},  # no explain
        # An exact hit by its code alone: no word of the query is in the case (no lexical rank).
        {"query": "Kafka consumer lag", "errorCode": "ERROR 1205", "limit": 1, "explain": True},
    ]
    answers = [api.post("/api/cases/search", body, format="json") for body in questions]

    for answer in answers:
        assert answer.status_code == 200
        assert_served_as_documented(schema, "/api/cases/search", "post", answer)
    bodies = [answer.json() for answer in answers]
    assert bodies[0]["hits"][0]["explain"]["passage"]["text"]
    assert bodies[2]["hits"] == [] and bodies[2]["explain"]["nearestSimilar"]["offered"] is False
    assert "explain" not in bodies[3] and "explain" not in bodies[3]["hits"][0]
    (exact,) = bodies[4]["hits"]
    assert (exact["matchLevel"], exact["explain"]["lexicalRank"]) == ("L0", None)


def test_every_operation_answers_an_unreachable_cache_with_the_503_it_documents(
    schema, api, settings
) -> None:
    settings.CACHES = UNREACHABLE_CACHE
    values = {"{sessionId}": "s-1", "{caseId}": str(uuid.uuid4())}

    for path, method in sorted(OPERATIONS):
        url = path
        for name, value in values.items():
            url = url.replace(name, value)
        response = api.post(url, {}, format="json") if method == "post" else api.get(url)

        assert response.status_code == 503, (method, path)
        assert_served_as_documented(schema, path, method, response)


def test_feedback_refused_by_its_rate_limit_matches_the_429_it_documents(
    schema, api, settings
) -> None:
    cache.clear()
    settings.FEEDBACK_RATE_LIMIT = "1/min"
    DiagnosisSessionFactory(session_id="r-1", status="SUCCESS", answer="a")
    body = {"sessionId": "r-1", "feedback": "not_useful"}

    first = api.post("/api/feedback", body, format="json")
    second = api.post("/api/feedback", body, format="json")

    assert (first.status_code, second.status_code) == (200, 429)
    assert_served_as_documented(schema, "/api/feedback", "post", second)


def _url(path: str) -> str:
    return path.replace("{sessionId}", "s-1").replace("{caseId}", str(uuid.uuid4()))


POSTS = sorted(path for path, method in OPERATIONS if method == "post")


@pytest.mark.parametrize("path", POSTS)
def test_every_post_endpoint_answers_a_method_it_does_not_take_with_the_405_it_documents(
    schema, api, path
) -> None:
    DiagnosisSessionFactory(session_id="s-1")

    response = api.put(_url(path), {}, format="json")

    assert response.status_code == 405
    assert "POST" in response["Allow"]
    assert schema["paths"][path]["post"]["responses"]["405"]["headers"]["Allow"]["required"]
    assert_served_as_documented(schema, path, "post", response)


@pytest.mark.parametrize("path", POSTS)
def test_every_post_endpoint_that_reads_a_body_documents_the_415_it_answers(
    schema, api, path
) -> None:
    DiagnosisSessionFactory(session_id="s-1")
    documented = schema["paths"][path]["post"]["responses"]

    compressed = api.post(
        _url(path), b"\x1f\x8b", content_type="application/json", HTTP_CONTENT_ENCODING="gzip"
    )
    not_json = api.post(_url(path), "query=x", content_type="text/plain")

    answered = {compressed.status_code, not_json.status_code}
    assert (415 in answered) == ("415" in documented), answered
    for response in (compressed, not_json):
        if response.status_code == 415:
            assert_served_as_documented(schema, path, "post", response)
