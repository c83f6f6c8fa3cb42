"""POST /v1/traces: a session that loses tool facts to another (a trace's root arrives
naming another session than the one its sub-agent named first) is scored again, as a
session that gains late facts is: its score always matches its tool invocations."""

import pytest

from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

# A successful retrieval that found nothing: +30 -10.
OWN_TOOL_ONLY = 20
# With a successful exact match beside it: +30 +35.
WITH_THE_SUB_AGENTS_L0 = 65


def retrieval(name: str, *, trace: bytes, parent: bytes, level: str, hits: int):  # type: ignore[no-untyped-def]
    return span(
        f"execute_tool {name}",
        trace_id=trace,
        parent=parent,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "diagnosis.tool.kind": "retrieval",
            "diagnosis.match_level": level,
            "diagnosis.hit_count": hits,
        },
    )


def session_read(make_client, session_id: str) -> dict:  # type: ignore[no-untyped-def]
    response = make_client("agent").get(f"/api/sessions/{session_id}")
    assert response.status_code == 200, response.content
    return response.json()


def factor_names(session: dict) -> list[str]:
    return [factor["name"] for factor in session["selfEvaluation"]["factors"]]


def test_a_session_whose_sub_agent_facts_move_to_the_roots_session_is_scored_again(
    client, key, make_client
):
    first, second = new_trace_id(), new_trace_id()
    first_root = new_span_id()
    post(
        client,
        export(
            retrieval("Own", trace=first, parent=first_root, level="NONE", hits=0),
            span(
                "invoke_agent main",
                trace_id=first,
                span_id=first_root,
                attributes={"session.id": "S2c", "output.value": "pool exhausted"},
            ),
        ),
        key=key,
    )
    assert session_read(make_client, "S2c")["selfEvaluation"]["evidence_score"] == OWN_TOOL_ONLY
    second_root, sub_agent = new_span_id(), new_span_id()
    post(
        client,
        export(
            retrieval("SubTool", trace=second, parent=sub_agent, level="L0", hits=1),
            span(
                "invoke_agent sub",
                trace_id=second,
                span_id=sub_agent,
                parent=second_root,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.conversation.id": "S2c",
                },
            ),
        ),
        key=key,
    )
    assert (
        session_read(make_client, "S2c")["selfEvaluation"]["evidence_score"]
        == WITH_THE_SUB_AGENTS_L0
    )

    response = post(
        client,
        export(
            span(
                "invoke_agent triage",
                trace_id=second,
                span_id=second_root,
                attributes={"session.id": "S1c", "output.value": "see the runbook"},
            )
        ),
        key=key,
    )

    assert response.status_code == 200, response.content
    lost = session_read(make_client, "S2c")
    assert [i["toolName"] for i in lost["toolInvocations"]] == ["Own"]
    assert lost["selfEvaluation"]["evidence_score"] == OWN_TOOL_ONLY
    assert "l0_exact_match" not in factor_names(lost)
    gained = session_read(make_client, "S1c")
    assert [i["toolName"] for i in gained["toolInvocations"]] == ["SubTool"]
    assert gained["selfEvaluation"]["evidence_score"] == WITH_THE_SUB_AGENTS_L0


def test_the_session_that_lost_facts_gets_its_opinion_formed_again(
    client, key, make_client, settings
):
    """Its opinion spoke of the tools it held: formed again from what it holds now."""
    settings.OPINION_PROVIDER = "heuristic"
    first, second = new_trace_id(), new_trace_id()
    first_root, second_root, sub_agent = new_span_id(), new_span_id(), new_span_id()
    post(
        client,
        export(
            span(
                "invoke_agent main",
                trace_id=first,
                span_id=first_root,
                attributes={"session.id": "S2c", "output.value": "SubTool says: pool exhausted"},
            ),
        ),
        key=key,
    )
    post(
        client,
        export(
            retrieval("SubTool", trace=second, parent=sub_agent, level="L0", hits=1),
            span(
                "invoke_agent sub",
                trace_id=second,
                span_id=sub_agent,
                parent=second_root,
                attributes={"gen_ai.conversation.id": "S2c"},
            ),
        ),
        key=key,
    )
    before = session_read(make_client, "S2c")["selfEvaluation"]["llm_opinion"]

    post(
        client,
        export(
            span(
                "invoke_agent triage",
                trace_id=second,
                span_id=second_root,
                attributes={"session.id": "S1c"},
            )
        ),
        key=key,
    )

    after = session_read(make_client, "S2c")["selfEvaluation"]
    assert after["evidence_score"] == 0  # no tool call left
    assert after["llm_opinion"] != before
    assert "SubTool" not in str(after["llm_opinion"])
