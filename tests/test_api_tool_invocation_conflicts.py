"""An invocationId names one tool call: sent again with the same facts it is a retry (a
duplicate, stored once); sent with other facts it is a conflict (409), and nothing of
that batch is stored."""

import pytest

from config.api import Conflict, api_error_of
from diagnosis import services
from diagnosis.models import ToolInvocation
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/sessions/run-1/tool-invocations"


def call(**overrides):  # type: ignore[no-untyped-def]
    return {
        "invocationId": "i-1",
        "toolName": "QueryInternalDocsTools",
        "status": "SUCCESS",
        "matchLevel": "L0",
        "hitCount": 3,
        "query": "connection pool exhausted",
        **overrides,
    }


@pytest.fixture(autouse=True)
def running():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="run-1")


def stored() -> list[tuple]:
    return list(
        ToolInvocation.objects.order_by("id").values_list("invocation_id", "tool_name", "query")
    )


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"toolName": "SearchRunbookTools"}, "toolName"),
        ({"query": "disk full"}, "query"),
        ({"status": "FAILED", "matchLevel": None, "errorMessage": "timeout"}, "status"),
        ({"hitCount": 0, "matchLevel": "NONE"}, "matchLevel"),
    ],
)
def test_an_invocation_id_sent_again_with_other_facts_is_409_naming_it(api, changed, named) -> None:
    api.post(URL, call(), format="json")

    response = api.post(URL, [call(invocationId="i-2"), call(**changed)], format="json")

    assert response.status_code == 409
    body = response.json()
    assert (body["success"], body["code"]) == (False, "invocation_conflict")
    assert '"i-1"' in body["message"] and named in body["message"]
    # Nothing of the batch, not even its new invocation.
    assert stored() == [("i-1", "QueryInternalDocsTools", "connection pool exhausted")]


def test_an_invocation_id_repeated_with_other_facts_within_one_batch_is_409(api) -> None:
    response = api.post(
        URL, [call(), call(invocationId="i-2"), call(toolName="SearchRunbookTools")], format="json"
    )

    assert response.status_code == 409
    assert response.json()["code"] == "invocation_conflict"
    assert '"i-1"' in response.json()["message"]
    assert stored() == []


def test_an_identical_repeat_is_still_a_duplicate_and_whitespace_around_text_is_no_change(
    api,
) -> None:
    api.post(URL, call(), format="json")

    response = api.post(
        URL,
        [call(toolName=" QueryInternalDocsTools ", query="connection pool exhausted\n"), call()],
        format="json",
    )

    assert response.status_code == 200
    assert response.json() == {"sessionId": "run-1", "received": 2, "created": 0, "duplicates": 2}
    assert len(stored()) == 1


def test_an_in_process_repeat_with_other_facts_is_refused_as_over_rest(api) -> None:
    api.post(URL, call(), format="json")

    with pytest.raises(Conflict) as refusal:
        services.invocations_record(
            session_id="run-1",
            invocations=[
                {"invocation_id": "i-9", "tool_name": "T", "status": "FAILED"},
                {"invocation_id": "i-1", "tool_name": "T", "status": "FAILED"},
            ],
        )

    error = api_error_of(refusal.value)
    assert (error.status, error.code) == (409, "invocation_conflict")
    assert '"i-1"' in error.message
    assert len(stored()) == 1
