"""A session reported as spans stores its question and its user id as one started over
REST: without the whitespace around them, so one user is one id whichever way the agent
reports."""

import json

import pytest

from tests.otlp import export, kb_tool, new_span_id, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

QUESTION = "\n  order-service 504?  \n"
USER_ID = "\tops.li \n"


def agent_run(session_id: str, trace=None, root=None, **attributes) -> list:  # type: ignore[no-untyped-def]
    """A root agent span naming `session_id` with `attributes`, answered."""
    return [
        span(
            "invoke_agent agent",
            trace_id=trace or new_trace_id(),
            span_id=root or new_span_id(),
            attributes={
                "session.id": session_id,
                "gen_ai.operation.name": "invoke_agent",
                "final_result": "扩容连接池。",
                **attributes,
            },
        )
    ]


def read(api, session_id: str) -> tuple:  # type: ignore[no-untyped-def]
    body = api.get(f"/api/sessions/{session_id}").json()
    return body["query"], body["userId"]


def test_a_question_and_user_id_sent_as_spans_are_stored_as_over_rest(client, key, api) -> None:
    api.post(
        "/api/sessions", {"sessionId": "rest", "query": QUESTION, "userId": USER_ID}, format="json"
    )

    response = post(
        client, export(*agent_run("otlp", **{"input.value": QUESTION, "user.id": USER_ID})), key=key
    )

    assert response.status_code == 200
    assert read(api, "otlp") == read(api, "rest") == ("order-service 504?", "ops.li")


def test_a_question_in_the_genai_messages_and_an_enduser_id_are_stored_trimmed(
    client, key, api
) -> None:
    messages = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    run = agent_run(
        "genai", **{"gen_ai.input.messages": json.dumps(messages), "enduser.id": USER_ID}
    )

    post(client, export(*run), key=key)

    assert read(api, "genai") == ("order-service 504?", "ops.li")


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("  " + "u" * 64 + "  ", "u" * 64),
        ("\n" + "v" * 70, "v" * 64),
    ],
)
def test_a_user_id_is_trimmed_then_cut_to_its_first_64_characters(
    client, key, api, sent, stored
) -> None:
    post(client, export(*agent_run("long-user", **{"user.id": sent})), key=key)

    assert read(api, "long-user")[1] == stored


def test_a_user_id_of_whitespace_alone_is_none_and_the_next_attribute_is_read(
    client, key, api
) -> None:
    post(
        client,
        export(*agent_run("blank-user", **{"user.id": " \t ", "enduser.id": " ops.li"})),
        key=key,
    )
    post(client, export(*agent_run("no-user", **{"user.id": "   "})), key=key)

    assert read(api, "blank-user")[1] == "ops.li"
    assert read(api, "no-user")[1] is None


def test_a_question_of_whitespace_alone_gives_way_to_the_model_calls(client, key, api) -> None:
    trace, root = new_trace_id(), new_span_id()
    messages = [{"role": "user", "parts": [{"type": "text", "content": " 磁盘为什么满了？ "}]}]
    spans = [
        span(
            "invoke_agent agent",
            trace_id=trace,
            span_id=root,
            attributes={
                "session.id": "blank-question",
                "gen_ai.operation.name": "invoke_agent",
                "input.value": " \n ",
                "final_result": "清理磁盘。",
            },
        ),
        span(
            "chat local-model",
            trace_id=trace,
            parent=root,
            attributes={
                "session.id": "blank-question",
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(messages),
            },
        ),
    ]

    post(client, export(*spans), key=key)

    assert read(api, "blank-question")[0] == "磁盘为什么满了？"


def test_a_tool_span_with_arguments_of_whitespace_alone_has_no_query_as_over_rest(
    client, key, api
) -> None:
    trace, root = new_trace_id(), new_span_id()
    spans = [
        *agent_run("blank-arguments", trace, root),
        kb_tool(
            trace, root, **{"session.id": "blank-arguments", "gen_ai.tool.call.arguments": " "}
        ),
    ]

    post(client, export(*spans), key=key)

    invocation = api.get("/api/sessions/blank-arguments").json()["toolInvocations"][0]
    assert invocation["query"] is None
