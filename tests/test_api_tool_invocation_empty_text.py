"""An empty text fact is no text: an invocation sent with `"errorMessage": ""` (or an
empty query) and sent again without it, or with null, is one call, a duplicate, and it is
stored as null whichever way it came."""

import pytest

from diagnosis import services
from diagnosis.models import ToolInvocation
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db

URL = "/api/sessions/run-1/tool-invocations"
FAILED = {"invocationId": "i-1", "toolName": "QueryInternalDocsTools", "status": "FAILED"}


@pytest.fixture(autouse=True)
def running():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="run-1")


def without(fact: dict, name: str) -> dict:
    return {key: value for key, value in fact.items() if key != name}


@pytest.mark.parametrize("name", ["errorMessage", "query"])
@pytest.mark.parametrize(
    ("first", "again"),
    [("", None), (None, ""), ("", "absent"), ("absent", ""), ("   ", "absent"), ("", "\n")],
)
def test_an_empty_text_and_an_absent_or_null_one_are_the_same_invocation(
    api, name, first, again
) -> None:
    def sent(value):  # type: ignore[no-untyped-def]
        return without(FAILED, name) if value == "absent" else {**FAILED, name: value}

    created = api.post(URL, sent(first), format="json")
    response = api.post(URL, sent(again), format="json")

    assert created.status_code == 201
    assert response.status_code == 200, response.json()
    assert response.json() == {"sessionId": "run-1", "received": 1, "created": 0, "duplicates": 1}
    assert ToolInvocation.objects.count() == 1


@pytest.mark.parametrize("name", ["errorMessage", "query"])
def test_an_empty_text_is_stored_and_read_as_null(api, name) -> None:
    api.post(URL, {**FAILED, name: "  "}, format="json")

    invocation = api.get("/api/sessions/run-1").json()["toolInvocations"][0]

    assert invocation[name] is None


def test_a_retry_that_drops_an_empty_text_matches_one_stored_empty_earlier(api, running) -> None:
    ToolInvocationFactory(
        session=running,
        invocation_id="i-1",
        tool_name="QueryInternalDocsTools",
        kind="retrieval",
        status="FAILED",
        match_level=None,
        hit_count=0,
        query="",
        error_message="",
        duration_ms=None,
    )

    response = api.post(URL, FAILED, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["duplicates"] == 1


@pytest.mark.parametrize("name", ["errorMessage", "query"])
def test_a_text_where_there_was_none_is_still_409_naming_it(api, name) -> None:
    api.post(URL, {**FAILED, name: ""}, format="json")

    response = api.post(URL, {**FAILED, name: "timeout"}, format="json")

    assert response.status_code == 409
    assert response.json()["code"] == "invocation_conflict"
    assert name in response.json()["message"]


def test_an_in_process_retry_without_the_empty_text_is_a_duplicate_as_over_rest(api) -> None:
    api.post(URL, {**FAILED, "errorMessage": "", "query": ""}, format="json")

    recorded = services.invocations_record(
        session_id="run-1",
        invocations=[
            {"invocation_id": "i-1", "tool_name": "QueryInternalDocsTools", "status": "FAILED"}
        ],
    )

    assert (recorded.created, recorded.duplicates) == (0, 1)
