"""A session and its facts are stored alike whichever way they come in: the whitespace
around a query, a userId or an invocation's text goes over REST and in-process alike."""

import pytest

from diagnosis import services
from diagnosis.models import DiagnosisSession, ToolInvocation
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

QUERY = "  order-service 大量 504，怎么排查？\n"
USER_ID = " ops.li\t"


def stored_session(session_id: str) -> tuple:
    return DiagnosisSession.objects.values_list("query", "user_id").get(session_id=session_id)


def stored_invocation(session_id: str) -> tuple:
    return ToolInvocation.objects.values_list(
        "invocation_id", "tool_name", "query", "error_message"
    ).get(session_id=session_id)


def test_a_session_started_in_process_stores_its_query_and_user_id_as_one_started_over_rest(
    api,
) -> None:
    over_rest = api.post(
        "/api/sessions", {"sessionId": "rest", "query": QUERY, "userId": USER_ID}, format="json"
    )
    services.session_start(session_id="inproc", query=QUERY, user_id=USER_ID)

    assert over_rest.status_code == 201
    assert over_rest.json()["query"] == "order-service 大量 504，怎么排查？"
    assert stored_session("inproc") == stored_session("rest")
    assert stored_session("inproc") == ("order-service 大量 504，怎么排查？", "ops.li")


def test_a_user_id_that_fits_once_trimmed_is_taken_in_process_as_over_rest(api) -> None:
    padded = "  " + "u" * 64 + "  "

    over_rest = api.post(
        "/api/sessions", {"sessionId": "rest", "query": "q", "userId": padded}, format="json"
    )
    services.session_start(session_id="inproc", query="q", user_id=padded)

    assert over_rest.status_code == 201
    assert stored_session("inproc") == stored_session("rest") == ("q", "u" * 64)


def test_tool_invocation_text_recorded_in_process_is_stored_as_over_rest(api) -> None:
    DiagnosisSessionFactory(session_id="rest")
    DiagnosisSessionFactory(session_id="inproc")

    over_rest = api.post(
        "/api/sessions/rest/tool-invocations",
        {
            "invocationId": " i-1 ",
            "toolName": " QueryInternalDocsTools\n",
            "status": "FAILED",
            "query": "  connection pool ",
            "errorMessage": " timeout ",
        },
        format="json",
    )
    services.invocations_record(
        session_id="inproc",
        invocations=[
            {
                "invocation_id": " i-1 ",
                "tool_name": " QueryInternalDocsTools\n",
                "status": "FAILED",
                "query": "  connection pool ",
                "error_message": " timeout ",
            }
        ],
    )

    assert over_rest.status_code == 201
    assert stored_invocation("inproc") == stored_invocation("rest")
    assert stored_invocation("inproc") == (
        "i-1",
        "QueryInternalDocsTools",
        "connection pool",
        "timeout",
    )


def test_an_in_process_retry_with_a_padded_invocation_id_is_the_same_invocation(api) -> None:
    DiagnosisSessionFactory(session_id="s")
    fact = {"toolName": "T", "status": "SUCCESS", "matchLevel": "L0"}
    api.post("/api/sessions/s/tool-invocations", {**fact, "invocationId": "i-1"}, format="json")

    recorded = services.invocations_record(
        session_id="s",
        invocations=[
            {"invocation_id": "i-1 ", "tool_name": "T", "status": "SUCCESS", "match_level": "L0"}
        ],
    )

    assert (recorded.created, recorded.duplicates) == (0, 1)
    assert ToolInvocation.objects.count() == 1
