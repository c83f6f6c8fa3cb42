"""Scoring through a real `manage.py qcluster` worker on the ORM broker (MariaDB)."""

import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django_q.models import Failure, Task

from diagnosis.models import DiagnosisSession
from evaluation.tasks import SCORING_TASK
from tests.processes import ROOT, child_env, stop_group, wait_for

pytestmark = [
    pytest.mark.mysql,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

RETRY_SECONDS = 4


@pytest.fixture
def queue_to_broker(monkeypatch):  # type: ignore[no-untyped-def]
    """Enqueue for real: the suite otherwise runs tasks inline (Q_SYNC)."""
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)


@pytest.fixture
def qcluster(tmp_path, queue_to_broker):  # type: ignore[no-untyped-def]
    log = (tmp_path / "qcluster.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        # Q_SAVE_LIMIT: keep successful task records, which this test looks at.
        env=child_env(
            Q_POLL="0.1",
            Q_TIMEOUT=str(RETRY_SECONDS - 1),
            Q_RETRY=str(RETRY_SECONDS),
            Q_SAVE_LIMIT="50",
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    yield process
    stop_group(process)
    log.close()


def _start_and_complete(api, session_id: str) -> None:  # type: ignore[no-untyped-def]
    assert (
        api.post(
            "/api/sessions", {"sessionId": session_id, "query": "q"}, format="json"
        ).status_code
        == 201
    )
    calls = [
        {
            "invocationId": str(n),
            "toolName": "QueryInternalDocsTools",
            "status": "SUCCESS",
            "matchLevel": "L0",
        }
        for n in range(20)
    ]
    assert (
        api.post(f"/api/sessions/{session_id}/tool-invocations", calls, format="json").status_code
        == 201
    )
    completed = api.post(
        f"/api/sessions/{session_id}/complete", {"status": "SUCCESS", "answer": "a"}, format="json"
    )
    assert completed.status_code == 200


def test_a_completed_session_is_scored_by_the_worker(api, qcluster) -> None:
    _start_and_complete(api, "e2e-1")

    def scored() -> bool:
        return api.get("/api/sessions/e2e-1").json()["selfEvaluation"] is not None

    wait_for(scored, timeout=30, what="the worker to score the session")
    assert api.get("/api/sessions/e2e-1").json()["selfEvaluation"] == {
        "evidence_score": 65,
        "source": "rule",
        "factors": [
            {
                "name": "has_successful_tool_call",
                "delta": 30,
                "description": "有成功的工具调用(20次)",
            },
            {"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中"},
        ],
        "rules_version": 1,
    }
    # The worker's monitor saves the task record just after the task has run.
    wait_for(
        lambda: Task.objects.filter(func=SCORING_TASK, success=True).exists(),
        timeout=10,
        what="the task record",
    )


def test_a_failing_scoring_leaves_null_is_recorded_and_retried(api, qcluster, client) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TRIGGER block_score BEFORE UPDATE ON diagnosis_session FOR EACH ROW "
            "BEGIN IF NEW.session_id = 'e2e-poison' AND NEW.self_evaluation IS NOT NULL "
            "THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'score write refused'; END IF; END"
        )
    try:
        _start_and_complete(api, "e2e-poison")
        wait_for(
            lambda: Failure.objects.filter(func=SCORING_TASK).exists(),
            timeout=30,
            what="the failure to be recorded",
        )
        failure = Failure.objects.get(func=SCORING_TASK)
        assert failure.args == ("e2e-poison",)
        assert "score write refused" in failure.result
        assert DiagnosisSession.objects.get(session_id="e2e-poison").self_evaluation is None
        assert api.get("/api/sessions/e2e-poison").json()["selfEvaluation"] is None

        staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw")
        client.force_login(staff)
        page = client.get("/admin/django_q/failure/")
        assert page.status_code == 200
        assert "session_score" in page.content.decode()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER block_score")

    # The cause is gone: the next delivery (after Q_RETRY seconds) succeeds.
    wait_for(
        lambda: DiagnosisSession.objects.get(session_id="e2e-poison").self_evaluation is not None,
        timeout=RETRY_SECONDS * 6,
        what="the retried task to score the session",
    )
    assert (
        DiagnosisSession.objects.get(session_id="e2e-poison").self_evaluation["evidence_score"]
        == 65
    )
