"""Opinions through a real `manage.py qcluster` worker, on SQLite and on MariaDB.

The scoring task enqueues the opinion task after its write commits; the worker runs both.
A provider that fails leaves the score as it is and a Failure in the admin's Failed tasks.
"""

import subprocess
import sys

import pytest
from django_q.models import Failure

from diagnosis.models import DiagnosisSession
from evaluation.opinion import FACTOR_NAMES
from evaluation.services import OPINION_TASK
from tests.chat_server import chat_server
from tests.processes import ROOT, child_env, stop_group, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def start_qcluster(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    # Enqueue for real: the suite otherwise runs tasks inline (Q_SYNC).
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    started = []

    def start(**env: str) -> subprocess.Popen:
        log = (tmp_path / "qcluster.log").open("w")
        process = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=child_env(Q_POLL="0.1", Q_TIMEOUT="3", Q_RETRY="4", **env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append((process, log))
        return process

    yield start
    for process, log in started:
        stop_group(process)
        log.close()


def _complete(api, session_id: str) -> None:  # type: ignore[no-untyped-def]
    assert (
        api.post(
            "/api/sessions", {"sessionId": session_id, "query": "order-service 504"}, format="json"
        ).status_code
        == 201
    )
    api.post(
        f"/api/sessions/{session_id}/tool-invocations",
        {"toolName": "QueryInternalDocsTools", "status": "SUCCESS", "matchLevel": "L0"},
        format="json",
    )
    completed = api.post(
        f"/api/sessions/{session_id}/complete",
        {"status": "SUCCESS", "answer": "根因：连接池耗尽。\n1. 扩容连接池\n2. 加熔断"},
        format="json",
    )
    assert completed.status_code == 200


def _evaluation(session_id: str) -> dict | None:
    return DiagnosisSession.objects.get(session_id=session_id).self_evaluation


def test_the_worker_scores_a_session_then_forms_its_opinion(api, start_qcluster) -> None:
    start_qcluster(OPINION_PROVIDER="heuristic")
    _complete(api, "op-e2e")

    wait_for(
        lambda: "llm_opinion" in (_evaluation("op-e2e") or {}),
        timeout=40,
        what="the worker to form the opinion",
    )
    evaluation = api.get("/api/sessions/op-e2e").json()["selfEvaluation"]
    assert list(evaluation) == [
        "evidence_score",
        "source",
        "factors",
        "rules_version",
        "llm_opinion",
    ]
    assert evaluation["evidence_score"] == 65
    opinion = evaluation["llm_opinion"]
    assert opinion["source"] == "heuristic"
    assert [f["name"] for f in opinion["factors"]] == list(FACTOR_NAMES)
    assert {f["name"]: f["value"] for f in opinion["factors"]}["has_root_cause"] is True


def test_a_failing_provider_is_a_failed_task_and_the_score_stays(api, start_qcluster) -> None:
    with chat_server() as llm:
        llm.answer(then="500")
        start_qcluster(
            OPINION_PROVIDER="openai",
            OPINION_BASE_URL=llm.base_url,
            OPINION_MODEL="local-model",
            OPINION_API_KEY="sk-e2e-secret",
            OPINION_TIMEOUT="1",
            OPINION_MAX_RETRIES="0",
        )
        _complete(api, "op-fail")

        wait_for(
            lambda: Failure.objects.filter(func=OPINION_TASK).exists(),
            timeout=40,
            what="the opinion's failure to be recorded",
        )
        failure = Failure.objects.filter(func=OPINION_TASK).first()
        assert failure.args == ("op-fail",)
        assert "InternalServerError" in failure.result
        assert "sk-e2e-secret" not in failure.result
        evaluation = _evaluation("op-fail")
        assert evaluation["evidence_score"] == 65
        assert "llm_opinion" not in evaluation
        assert llm.requests, "the worker asked the endpoint"
