"""rescore over 10,000 generated sessions agrees with the task and with the rule engine."""

import io

import pytest
from django.core.management import call_command

from diagnosis.models import DiagnosisSession
from evaluation.rules import InvocationFacts, evaluate
from evaluation.tasks import session_score
from tests.datasets import generate_sessions

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def _scores() -> dict:
    return dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))


def test_rescore_agrees_with_the_task_on_ten_thousand_sessions_and_is_repeatable() -> None:
    generated = generate_sessions(10_000)

    call_command("rescore", "--all", "--batch", "700", "--no-progress", stdout=io.StringIO())
    by_rescore = _scores()
    call_command("rescore", "--all", "--batch", "700", "--no-progress", stdout=io.StringIO())
    assert _scores() == by_rescore

    DiagnosisSession.objects.update(self_evaluation=None)
    for session_id in generated:
        session_score(session_id)
    by_task = _scores()

    expected = {
        session_id: None
        if status == "RUNNING"
        else evaluate(session_status=status, facts=InvocationFacts.from_calls(calls))
        for session_id, (status, calls) in generated.items()
    }
    assert by_rescore == by_task == expected
    bands = {score["evidence_score"] for score in by_task.values() if score}
    assert {0, 30, 65} <= bands  # the generated mix covers the interesting cases


def test_an_interrupted_rescore_finishes_on_the_next_run() -> None:
    generate_sessions(3_000, prefix="int")
    scorable = DiagnosisSession.objects.exclude(status="RUNNING")
    first_half = list(scorable.order_by("id").values_list("session_id", "status")[:1_000])
    from evaluation.services import sessions_evaluate

    sessions_evaluate(sessions=first_half)  # as far as an interrupted run got
    assert scorable.filter(self_evaluation__isnull=True).count() == scorable.count() - 1_000

    out = io.StringIO()
    call_command("rescore", "--missing", "--no-progress", stdout=out)

    assert not scorable.filter(self_evaluation__isnull=True).exists()
    assert out.getvalue().startswith(f"Scored {scorable.count() - 1_000} session(s) in ")
