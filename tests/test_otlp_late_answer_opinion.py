"""POST /v1/traces: an answer that arrives after its session was scored (the root had
none of its own; a call of the trace that ended later brings it) gets the session scored
again and its opinion formed again: the opinion formed first read a blank answer."""

import pytest

from diagnosis.models import DiagnosisSession
from tests.otlp import export, kb_tool, new_span_id, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

ANSWER = "根因是 payment 连接池耗尽：建议扩容 payment，并按 kb 的步骤调大连接池。"


def rationales(opinion: dict) -> list[str]:
    return [factor["rationale"] for factor in opinion["factors"]]


def test_a_late_answer_gets_the_opinion_formed_again_from_it(client, key, settings):
    settings.OPINION_PROVIDER = "heuristic"
    trace, root = new_trace_id(), new_span_id()
    run = span("invoke_agent ops", trace_id=trace, span_id=root, attributes={"session.id": "w"})
    post(client, export(kb_tool(trace, root), run), key=key)
    first = DiagnosisSession.objects.get().self_evaluation["llm_opinion"]
    assert "the answer is blank" in rationales(first)
    chat = span(
        "chat local-model",
        trace_id=trace,
        parent=root,
        attributes={"gen_ai.operation.name": "chat", "output.value": ANSWER},
    )

    assert post(client, export(chat), key=key).status_code == 200

    session = DiagnosisSession.objects.get()
    assert session.answer == ANSWER
    opinion = session.self_evaluation["llm_opinion"]
    assert "the answer is blank" not in rationales(opinion)
    assert {f["name"]: f["value"] for f in opinion["factors"]}["has_root_cause"] is True
    assert session.self_evaluation["evidence_score"] == 65


def test_a_resent_late_answer_forms_no_opinion_again(client, key, settings):
    """The answer already stored: nothing changed, nothing formed again."""
    settings.OPINION_PROVIDER = "heuristic"
    trace, root = new_trace_id(), new_span_id()
    run = span("invoke_agent ops", trace_id=trace, span_id=root, attributes={"session.id": "w"})
    chat = span(
        "chat local-model",
        trace_id=trace,
        parent=root,
        attributes={"gen_ai.operation.name": "chat", "output.value": ANSWER},
    )
    post(client, export(run), key=key)
    post(client, export(chat), key=key)
    formed = DiagnosisSession.objects.get().self_evaluation["llm_opinion"]

    post(client, export(chat), key=key)

    assert DiagnosisSession.objects.get().self_evaluation["llm_opinion"] == formed
