"""Scoring one session (the task's path) and many (rescore's path)."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from diagnosis.models import DiagnosisSession
from evaluation.services import session_evaluate, sessions_evaluate
from evaluation.tasks import session_score
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db

SEED_EXAMPLE = {
    "evidence_score": 65,
    "source": "rule",
    "factors": [
        {"name": "has_successful_tool_call", "delta": 30, "description": "有成功的工具调用(20次)"},
        {"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中"},
    ],
    # After the contract's keys: the rule set that scored it.
    "rules_version": 1,
}


def test_the_seed_example_is_scored_and_stored_exactly() -> None:
    session = DiagnosisSessionFactory(succeeded=True, session_id="seed")
    ToolInvocationFactory.create_batch(19, session=session, match_level="NONE", hit_count=0)
    ToolInvocationFactory(session=session, match_level="L0")

    assert session_score("seed") == 65

    stored = DiagnosisSession.objects.get(session_id="seed").self_evaluation
    assert stored == SEED_EXAMPLE
    assert list(stored) == ["evidence_score", "source", "factors", "rules_version"]
    assert [list(f) for f in stored["factors"]] == [["name", "delta", "description"]] * 2


def test_scoring_thirty_calls_costs_two_queries_not_one_per_call(
    django_assert_max_num_queries,
) -> None:
    session = DiagnosisSessionFactory(succeeded=True, session_id="q")
    ToolInvocationFactory.create_batch(30, session=session)

    with django_assert_max_num_queries(2):
        session_evaluate(session_id="q")

    assert DiagnosisSession.objects.get(session_id="q").evidence_score is not None


def test_a_running_session_is_left_alone() -> None:
    DiagnosisSessionFactory(session_id="run")

    assert session_score("run") is None
    assert DiagnosisSession.objects.get().self_evaluation is None


def test_a_failed_session_scores_zero_when_asked() -> None:
    session = DiagnosisSessionFactory(failed=True, session_id="f")
    ToolInvocationFactory(session=session)

    assert session_score("f") == 0
    assert DiagnosisSession.objects.get().self_evaluation["factors"] == [
        {"name": "execution_failed", "delta": 0, "description": "执行失败"}
    ]


def test_an_unknown_session_is_not_an_error() -> None:
    assert session_score("deleted-meanwhile") is None


def test_a_second_delivery_writes_the_same_value() -> None:
    session = DiagnosisSessionFactory(succeeded=True, session_id="twice")
    ToolInvocationFactory(session=session, match_level="L1")
    session_score("twice")
    first = DiagnosisSession.objects.get().self_evaluation

    session_score("twice")

    assert DiagnosisSession.objects.get().self_evaluation == first


def _block_score_writes(session_id: str) -> None:
    """A database trigger that refuses to store a score for one session."""
    with connection.cursor() as cursor:
        if connection.vendor == "mysql":
            cursor.execute(
                "CREATE TRIGGER block_score BEFORE UPDATE ON diagnosis_session FOR EACH ROW "
                f"BEGIN IF NEW.session_id = '{session_id}' AND NEW.self_evaluation IS NOT NULL "
                "THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'score write refused'; "
                "END IF; END"
            )
        else:
            cursor.execute(
                "CREATE TRIGGER block_score BEFORE UPDATE ON diagnosis_session "
                f"WHEN NEW.session_id = '{session_id}' AND NEW.self_evaluation IS NOT NULL "
                "BEGIN SELECT RAISE(ABORT, 'score write refused'); END"
            )


@pytest.mark.django_db(transaction=True)
def test_when_scoring_fails_the_task_raises_and_the_score_stays_null() -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="poison")
    _block_score_writes("poison")
    try:
        with pytest.raises(Exception, match="score write refused"):
            session_score("poison")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER block_score")

    assert DiagnosisSession.objects.get().self_evaluation is None


def test_batch_scoring_matches_one_by_one_scoring() -> None:
    shapes = [
        {"match_level": "L0"},
        {"match_level": "L1"},
        {"match_level": "NONE", "hit_count": 0},
        {"status": "FAILED", "match_level": None},
        {"kind": "other", "match_level": None},
    ]
    for n, shape in enumerate(shapes):
        session = DiagnosisSessionFactory(succeeded=True, session_id=f"b{n}")
        ToolInvocationFactory.create_batch(n + 1, session=session, **shape)
    DiagnosisSessionFactory(succeeded=True, session_id="empty")
    DiagnosisSessionFactory(failed=True, session_id="failed")
    DiagnosisSessionFactory(session_id="running")
    pairs = list(DiagnosisSession.objects.values_list("session_id", "status"))

    assert sessions_evaluate(sessions=pairs) == len(pairs) - 1
    batch = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))
    DiagnosisSession.objects.update(self_evaluation=None)
    for session_id, _ in pairs:
        session_evaluate(session_id=session_id)
    single = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))

    assert batch == single
    assert batch["running"] is None
    assert batch["empty"]["factors"][0]["name"] == "no_tool_call"


def _rescore(*args: str) -> str:
    out = io.StringIO()
    call_command("rescore", *args, "--no-progress", stdout=out)
    return out.getvalue()


def test_rescore_missing_scores_only_unscored_finished_sessions() -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="new")
    DiagnosisSessionFactory(
        succeeded=True, session_id="old", self_evaluation={"evidence_score": 99}
    )
    DiagnosisSessionFactory(session_id="running")

    output = _rescore("--missing", "--batch", "1")

    scores = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))
    assert scores["new"]["evidence_score"] == 0
    assert scores["old"] == {"evidence_score": 99}
    assert scores["running"] is None
    assert output.startswith("Scored 1 session(s) in ")


def test_rescore_all_rewrites_every_finished_session() -> None:
    DiagnosisSessionFactory(
        succeeded=True, session_id="old", self_evaluation={"evidence_score": 99}
    )

    _rescore("--all")

    assert DiagnosisSession.objects.get().self_evaluation["evidence_score"] == 0


def test_rescore_by_date_range_touches_only_sessions_created_then() -> None:
    inside = DiagnosisSessionFactory(succeeded=True, session_id="inside")
    outside = DiagnosisSessionFactory(succeeded=True, session_id="outside")
    DiagnosisSession.objects.filter(pk=inside.pk).update(created_at="2026-03-15T12:00:00Z")
    DiagnosisSession.objects.filter(pk=outside.pk).update(created_at="2026-04-01T00:00:01Z")

    _rescore("--since", "2026-03-01", "--until", "2026-03-31")

    scores = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))
    assert scores["inside"] is not None
    assert scores["outside"] is None


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--missing", "--all"),
        ("--since", "March"),
        ("--all", "--batch", "0"),
        ("--since", "2026-05-01", "--until", "2026-04-01"),
    ],
)
def test_rescore_refuses_unclear_requests(args) -> None:
    with pytest.raises((CommandError, SystemExit)):
        call_command("rescore", *args)


def test_rescore_outdated_rescores_only_what_an_older_rule_set_scored() -> None:
    from django.core.management import call_command

    from evaluation.rules import RULES_VERSION

    current = DiagnosisSessionFactory(succeeded=True, session_id="current")
    ToolInvocationFactory(session=current, match_level="L0")
    session_evaluate(session_id="current")
    before = DiagnosisSession.objects.get(session_id="current").updated_at
    old = DiagnosisSessionFactory(succeeded=True, session_id="old", evidence_score=30)
    ToolInvocationFactory(session=old, match_level="L0")
    unstamped = {**SEED_EXAMPLE}
    unstamped.pop("rules_version")
    legacy = DiagnosisSessionFactory(succeeded=True, session_id="legacy")
    DiagnosisSession.objects.filter(pk=legacy.pk).update(self_evaluation=unstamped)
    older = {**SEED_EXAMPLE, "rules_version": RULES_VERSION - 1}
    DiagnosisSession.objects.filter(pk=old.pk).update(self_evaluation=older)
    DiagnosisSessionFactory(session_id="running")

    call_command("rescore", "--outdated", "--no-progress")

    stored = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))
    assert stored["old"]["rules_version"] == RULES_VERSION
    assert stored["old"]["evidence_score"] == 65
    assert stored["legacy"]["rules_version"] == RULES_VERSION
    assert stored["legacy"]["evidence_score"] == 0  # no invocations: no_tool_call
    assert stored["running"] is None
    assert DiagnosisSession.objects.get(session_id="current").updated_at == before


def test_the_sweep_scores_completed_sessions_whose_task_was_lost(settings) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from evaluation.tasks import scoring_sweep

    settings.SCORING_SWEEP_AFTER = 60
    long_ago = timezone.now() - timedelta(minutes=5)
    lost = DiagnosisSessionFactory(succeeded=True, session_id="lost", finished_at=long_ago)
    ToolInvocationFactory(session=lost, match_level="L0")
    DiagnosisSessionFactory(succeeded=True, session_id="just-now")  # its task may still come
    DiagnosisSessionFactory(succeeded=True, session_id="scored", evidence_score=30)
    DiagnosisSession.objects.filter(session_id="scored").update(finished_at=long_ago)
    DiagnosisSessionFactory(failed=True, session_id="failed", finished_at=long_ago)

    assert scoring_sweep() == 1

    stored = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))
    assert stored["lost"]["evidence_score"] == 65
    assert stored["just-now"] is None and stored["failed"] is None
    assert stored["scored"]["evidence_score"] == 30
    assert scoring_sweep() == 0
