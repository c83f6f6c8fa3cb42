"""kill -9 of the whole qcluster mid-backlog: after a restart every session is scored exactly
as the rule engine says, none left NULL, none half-written."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from django.db import connection
from django_q.models import OrmQ
from django_q.tasks import async_task

from diagnosis.models import DiagnosisSession
from evaluation.rules import InvocationFacts, evaluate
from evaluation.tasks import SCORING_GROUP, SCORING_TASK
from tests.datasets import generate_sessions
from tests.processes import ROOT, alive, child_env, descendants, stop_group, wait_for

pytestmark = [
    pytest.mark.mysql,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

RETRY_SECONDS = 6


def _start_qcluster(log):  # type: ignore[no-untyped-def]
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=child_env(
            Q_WORKERS="2",
            Q_POLL="0.1",
            Q_TIMEOUT=str(RETRY_SECONDS - 1),
            Q_RETRY=str(RETRY_SECONDS),
        ),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _scored() -> int:
    return DiagnosisSession.objects.filter(status="SUCCESS", self_evaluation__isnull=False).count()


def test_a_killed_worker_loses_no_scoring_and_half_writes_nothing(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    generated = generate_sessions(1_400, prefix="crash")
    backlog = [sid for sid, (status, _) in generated.items() if status == "SUCCESS"]
    assert len(backlog) >= 1_000
    for session_id in backlog:
        async_task(SCORING_TASK, session_id, group=SCORING_GROUP)
    assert OrmQ.objects.count() == len(backlog)

    with (tmp_path / "qcluster.log").open("w") as log:
        first = _start_qcluster(log)
        try:
            wait_for(lambda: _scored() >= len(backlog) // 5, timeout=90, what="scoring to start")
            doomed = descendants(first.pid) | {first.pid}
            os.killpg(first.pid, signal.SIGKILL)  # every process of the cluster, no goodbye
            first.wait(timeout=10)
            wait_for(lambda: not alive(doomed), timeout=10, what="the killed cluster to be gone")
            at_crash = _scored()
            assert at_crash < len(backlog), "the backlog drained before the kill; grow it"
            time.sleep(1)
            assert _scored() == at_crash  # nobody is scoring now

            second = _start_qcluster(log)
            try:
                wait_for(
                    lambda: _scored() == len(backlog),
                    timeout=120,
                    what="the restarted cluster to finish the backlog",
                )
            finally:
                stop_group(second)
        finally:
            stop_group(first, signal.SIGKILL)

    expected = {
        sid: evaluate(session_status="SUCCESS", facts=InvocationFacts.from_calls(calls))
        for sid, (status, calls) in generated.items()
        if status == "SUCCESS"
    }
    stored = dict(
        DiagnosisSession.objects.filter(status="SUCCESS").values_list(
            "session_id", "self_evaluation"
        )
    )
    assert stored == expected
    with connection.cursor() as cursor:  # the stored text itself is whole JSON, in key order
        cursor.execute(
            "SELECT self_evaluation FROM diagnosis_session WHERE status = 'SUCCESS' LIMIT 50"
        )
        for (text,) in cursor.fetchall():
            assert list(json.loads(text)) == [
                "evidence_score",
                "source",
                "factors",
                "rules_version",
            ]
    assert (
        not DiagnosisSession.objects.exclude(status="SUCCESS")
        .filter(self_evaluation__isnull=False)
        .exists()
    )
    print(f"backlog {len(backlog)}, scored before the kill {at_crash}")
