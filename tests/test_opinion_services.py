"""Forming and storing opinions (heuristic provider), and rule writers that keep them."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from diagnosis.models import DiagnosisSession
from evaluation.models import OpinionBudget
from evaluation.opinion import FACTOR_NAMES
from evaluation.services import (
    opinion_budget_spend,
    session_evaluate,
    session_opinion_form,
    sessions_evaluate,
    sessions_opinion_form,
)
from evaluation.tasks import session_opinion, session_score
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db

RULE_KEYS = ["evidence_score", "source", "factors", "rules_version"]


@pytest.fixture(autouse=True)
def heuristic(settings) -> None:  # type: ignore[no-untyped-def]
    settings.OPINION_PROVIDER = "heuristic"


def finished(session_id: str, answer: str = "根因：连接池耗尽。\n1. 扩容\n2. 熔断", **kw):  # type: ignore[no-untyped-def]
    session = DiagnosisSessionFactory(succeeded=True, session_id=session_id, answer=answer, **kw)
    ToolInvocationFactory(session=session, match_level="L0", query="order-service 504")
    return session


@pytest.fixture
def score(django_capture_on_commit_callbacks):  # type: ignore[no-untyped-def]
    """The scoring task, with the opinion task it enqueues after commit run inline."""

    def run(session_id: str) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            session_score(session_id)

    return run


def stored(session_id: str) -> dict:
    return DiagnosisSession.objects.get(session_id=session_id).self_evaluation


def test_scoring_a_session_forms_its_opinion_after_the_rule_part(score) -> None:
    finished("s1")

    score("s1")

    evaluation = stored("s1")
    assert list(evaluation) == [*RULE_KEYS, "llm_opinion"]
    assert evaluation["evidence_score"] == 65
    opinion = evaluation["llm_opinion"]
    assert list(opinion) == ["source", "model", "version", "factors", "created_at"]
    assert (opinion["source"], opinion["model"]) == ("heuristic", "heuristic")
    assert [f["name"] for f in opinion["factors"]] == list(FACTOR_NAMES)
    assert all(type(f["value"]) is bool for f in opinion["factors"])
    values = {f["name"]: f["value"] for f in opinion["factors"]}
    assert values["has_root_cause"] and values["actionable_steps"]


def test_with_opinions_off_scoring_stores_the_rule_part_only(settings, score) -> None:
    settings.OPINION_PROVIDER = "off"
    finished("s1")

    score("s1")

    assert list(stored("s1")) == RULE_KEYS


def test_the_opinion_write_leaves_the_rule_part_as_it_was() -> None:
    finished("s1")
    rule_part = session_evaluate(session_id="s1")
    before = DiagnosisSession.objects.values_list("updated_at", flat=True).get()

    session_opinion_form(session_id="s1")

    evaluation = stored("s1")
    assert [(k, evaluation[k]) for k in RULE_KEYS] == list(rule_part.items())
    assert [list(f) for f in evaluation["factors"]] == [["name", "delta", "description"]] * 2
    assert DiagnosisSession.objects.values_list("updated_at", flat=True).get() == before


def test_a_session_not_scored_yet_gets_no_opinion() -> None:
    finished("s1")

    assert session_opinion("s1") is None
    assert stored("s1") is None


def test_a_second_delivery_of_the_opinion_task_changes_nothing(score) -> None:
    finished("s1")
    score("s1")
    first = stored("s1")

    assert session_opinion("s1") is None
    assert stored("s1") == first


@pytest.mark.parametrize("writer", ["session_evaluate", "sessions_evaluate", "rescore"])
def test_every_rule_writer_keeps_the_opinion_when_the_score_changes(writer, score) -> None:
    finished("s1")
    score("s1")
    opinion = stored("s1")["llm_opinion"]
    # What changes the score: the session is now judged FAILED (0, execution_failed).
    DiagnosisSession.objects.filter(session_id="s1").update(status="FAILED")

    if writer == "session_evaluate":
        session_evaluate(session_id="s1")
    elif writer == "sessions_evaluate":
        sessions_evaluate(sessions=[("s1", "FAILED")])
    else:
        call_command("rescore", "--all", "--no-progress", stdout=io.StringIO())

    evaluation = stored("s1")
    assert evaluation["evidence_score"] == 0
    assert evaluation["factors"][0]["name"] == "execution_failed"
    assert list(evaluation) == [*RULE_KEYS, "llm_opinion"]
    assert evaluation["llm_opinion"] == opinion


def updated_at(session_id: str):  # type: ignore[no-untyped-def]
    return DiagnosisSession.objects.get(session_id=session_id).updated_at


def test_rescore_leaves_unchanged_scores_and_their_opinions_untouched(score) -> None:
    for n in range(3):
        finished(f"s{n}")
        score(f"s{n}")
    before = [(stored(f"s{n}"), updated_at(f"s{n}")) for n in range(3)]

    call_command("rescore", "--all", "--no-progress", stdout=io.StringIO())

    assert [(stored(f"s{n}"), updated_at(f"s{n}")) for n in range(3)] == before


def test_rescore_still_writes_a_changed_score_beside_unchanged_ones(score) -> None:
    for n in range(3):
        finished(f"s{n}")
        score(f"s{n}")
    DiagnosisSession.objects.filter(session_id="s1").update(status="FAILED")
    unchanged = updated_at("s0"), updated_at("s2")

    call_command("rescore", "--all", "--no-progress", stdout=io.StringIO())

    assert (updated_at("s0"), updated_at("s2")) == unchanged
    assert stored("s1")["evidence_score"] == 0
    assert "llm_opinion" in stored("s1")
    assert stored("s0")["evidence_score"] == 65


def test_rescore_opinion_forms_the_missing_ones_in_a_few_queries_per_batch(
    django_assert_max_num_queries,
) -> None:
    for n in range(5):
        finished(f"s{n}")
        session_evaluate(session_id=f"s{n}")
    session_opinion_form(session_id="s0")
    kept = stored("s0")["llm_opinion"]
    out = io.StringIO()

    # the batch's ids, its sessions and their tools, one write (and the budget's rows)
    with django_assert_max_num_queries(8):
        call_command("rescore", "--opinion", "--missing", "--no-progress", stdout=out)

    assert "Formed 4 opinion(s) in " in out.getvalue()
    assert stored("s0")["llm_opinion"] == kept
    assert all("llm_opinion" in stored(f"s{n}") for n in range(5))


def test_rescore_opinion_reforms_the_chosen_range(count_statements, score) -> None:
    finished("s0")
    score("s0")
    DiagnosisSession.objects.filter(session_id="s0").update(answer="Everything is fine.")

    call_command("rescore", "--opinion", "--all", "--no-progress", stdout=io.StringIO())

    values = {f["name"]: f["value"] for f in stored("s0")["llm_opinion"]["factors"]}
    assert values["has_root_cause"] is False
    assert list(stored("s0")) == [*RULE_KEYS, "llm_opinion"]


def test_rescore_opinion_says_so_when_opinions_are_off(settings) -> None:
    settings.OPINION_PROVIDER = "off"

    with pytest.raises(CommandError, match="OPINION_PROVIDER is off"):
        call_command("rescore", "--opinion", "--all", "--no-progress")


def test_a_batch_of_opinions_skips_sessions_not_scored() -> None:
    finished("scored")
    session_evaluate(session_id="scored")
    finished("pending")

    assert sessions_opinion_form(session_ids=["scored", "pending", "unknown"]) == (1, 0)
    assert stored("pending") is None


@pytest.mark.parametrize(
    "answer",
    [
        "根因：" + "连接池耗尽。" * 200_000 + "\n1. 扩容\n2. 熔断",
        "根因 🔥🚒 连接池 🙈\n1. 扩容 👍\n2. 熔断 ✅ \U0001f9ea",
        "根因\x01\x02\x07\x1b[31m\x7f\x85\u200b\u202e连接池\ufeff耗尽 \ud7ff\ue000\U0010fffd",
        "Root cause: пул исчерпан; 解决: 扩容; الحل: إعادة التشغيل; 재시작\n1. a\n2. b",
    ],
    ids=["huge", "emoji", "control-characters", "mixed-scripts"],
)
def test_answers_of_any_size_and_any_unicode_get_an_opinion(api, answer, score) -> None:
    api.post("/api/sessions", {"sessionId": "u1", "query": "问题 ❓"}, format="json")
    api.post(
        "/api/sessions/u1/tool-invocations",
        {"toolName": "QueryInternalDocsTools", "status": "SUCCESS", "matchLevel": "L0"},
        format="json",
    )
    DiagnosisSession.objects.filter(session_id="u1").update(status="SUCCESS", answer=answer)

    score("u1")

    evaluation = api.get("/api/sessions/u1").json()["selfEvaluation"]
    assert evaluation["evidence_score"] == 65
    assert [f["name"] for f in evaluation["llm_opinion"]["factors"]] == list(FACTOR_NAMES)
    assert evaluation["llm_opinion"]["factors"][0]["value"] is True
    assert DiagnosisSession.objects.get(session_id="u1").answer == answer


def test_the_stored_document_is_valid_json_text_in_the_database(score) -> None:
    finished("s1")
    score("s1")

    with connection.cursor() as cursor:
        cursor.execute("SELECT self_evaluation FROM diagnosis_session WHERE session_id = 's1'")
        (text,) = cursor.fetchone()

    assert list(json.loads(text)) == [*RULE_KEYS, "llm_opinion"]


def test_the_daily_budget_counts_calls_up_to_the_limit() -> None:
    assert [opinion_budget_spend(limit=2) for _ in range(3)] == [True, True, False]
    assert OpinionBudget.objects.get().calls == 2
    assert opinion_budget_spend(limit=0) is False


def test_a_session_scored_by_the_sweep_gets_its_opinion(
    settings, django_capture_on_commit_callbacks
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from evaluation.tasks import scoring_sweep

    session = finished("lost-task")
    # Its scoring task was lost: finished long enough ago for the sweep to take it.
    DiagnosisSession.objects.filter(pk=session.pk).update(
        finished_at=timezone.now() - timedelta(seconds=settings.SCORING_SWEEP_AFTER + 60)
    )

    with django_capture_on_commit_callbacks(execute=True):
        assert scoring_sweep() == 1

    evaluation = stored("lost-task")
    assert evaluation["evidence_score"] == 65
    assert evaluation["llm_opinion"]["source"] == "heuristic"


def test_sessions_rescored_in_a_batch_get_the_opinions_they_lack(
    django_capture_on_commit_callbacks,
) -> None:
    finished("b1")
    finished("b2")

    with django_capture_on_commit_callbacks(execute=True):
        assert sessions_evaluate(sessions=[("b1", "SUCCESS"), ("b2", "SUCCESS")]) == 2

    assert stored("b1")["llm_opinion"]["source"] == "heuristic"
    assert stored("b2")["llm_opinion"]["source"] == "heuristic"


def test_the_rescore_command_forms_the_opinions_of_the_sessions_it_scores(
    django_capture_on_commit_callbacks,
) -> None:
    finished("r1")

    with django_capture_on_commit_callbacks(execute=True):
        call_command("rescore", "--all", stdout=io.StringIO())

    assert stored("r1")["llm_opinion"]["source"] == "heuristic"
