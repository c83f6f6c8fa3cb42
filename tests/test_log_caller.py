"""Every log line written while a request is handled names who made it: the API key (its
prefix, as `revoke_api_key` takes it) or a reader's feedback token, so that an auditor can
tell which agent wrote to a session (every key of a scope may write to any session)."""

import json

import pytest

from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def entries(json_lines: list[str], message: str) -> list[dict]:
    return [e for e in map(json.loads, json_lines) if e["message"] == message]


def test_the_lines_of_a_sessions_writes_name_the_key_that_made_each(
    make_client, json_lines
) -> None:
    first, second = make_client("agent"), make_client("agent")
    first.post("/api/sessions", {"sessionId": "who-1", "query": "q"}, format="json")
    second.post("/api/sessions/who-1/complete", {"status": "SUCCESS", "answer": "a"}, format="json")

    [started] = entries(json_lines, "session started")
    [completed] = entries(json_lines, "session completed")
    assert started["caller"] == f"api-key:{first.api_key.prefix}"
    assert completed["caller"] == f"api-key:{second.api_key.prefix}"


def test_feedback_sent_with_a_readers_token_names_the_token(make_client, json_lines) -> None:
    agent = make_client("agent")
    DiagnosisSessionFactory(session_id="who-2", succeeded=True)
    token = agent.post("/api/sessions/who-2/feedback-token").json()["feedbackToken"]
    agent.credentials(HTTP_AUTHORIZATION=f"Feedback {token}")

    agent.post("/api/feedback", {"sessionId": "who-2", "feedback": "not_useful"}, format="json")

    [recorded] = entries(json_lines, "feedback recorded")
    assert recorded["caller"] == "feedback-token"


def test_a_line_outside_any_request_names_no_caller(make_client, json_lines) -> None:
    make_client("agent").get("/api/sessions")
    import logging

    logging.getLogger("tests.caller").info("after the request")

    assert "caller" not in json.loads(json_lines[-1])
