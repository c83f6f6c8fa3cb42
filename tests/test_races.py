"""Concurrent ingest on MariaDB: facts stored once, one outcome, one scoring."""

import random

import pytest
from django_q.models import OrmQ

from diagnosis.models import ApiKey, DiagnosisSession, ToolInvocation
from evaluation.tasks import SCORING_TASK
from tests.concurrency import race
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def key() -> str:
    return ApiKey.objects.create_key(name="race", scope="agent")[1]


def test_overlapping_invocation_batches_store_each_fact_once(key) -> None:
    DiagnosisSessionFactory(session_id="overlap")
    rng = random.Random(3)
    batches = [sorted(rng.sample(range(120), 60)) for _ in range(24)]

    def send(batch):  # type: ignore[no-untyped-def]
        body = [
            {"invocationId": f"inv-{n}", "toolName": "QueryInternalDocsTools", "status": "SUCCESS"}
            for n in batch
        ]
        return lambda client: client.post(
            "/api/sessions/overlap/tool-invocations", body, format="json"
        )

    responses = race(key, [send(batch) for batch in batches])

    assert {r.status_code for r in responses} <= {200, 201}
    sent = {n for batch in batches for n in batch}
    stored = list(ToolInvocation.objects.values_list("invocation_id", flat=True))
    assert sorted(stored) == sorted(f"inv-{n}" for n in sent)
    assert sum(r.json()["created"] for r in responses) == len(sent)
    assert sum(r.json()["duplicates"] for r in responses) == sum(map(len, batches)) - len(sent)


def test_racing_completions_leave_one_outcome_and_one_scoring(key, monkeypatch) -> None:
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)  # count what gets queued
    DiagnosisSessionFactory(session_id="finish")
    outcomes = [
        {"status": "SUCCESS", "answer": "restart the pod"},
        {"status": "SUCCESS", "answer": "scale out"},
        {"status": "FAILED"},
    ] * 10

    def complete_with(body: dict):  # type: ignore[no-untyped-def]
        return lambda client: client.post("/api/sessions/finish/complete", body, format="json")

    responses = race(key, [complete_with(body) for body in outcomes])

    session = DiagnosisSession.objects.get()
    winner = {"status": session.status, "answer": session.answer}
    winner = {k: v for k, v in winner.items() if v is not None}
    codes = [r.status_code for r in responses]
    assert set(codes) == {200, 409}
    for body, response in zip(outcomes, responses, strict=True):
        assert response.status_code == (200 if body == winner else 409)
    queued = [task.func() for task in OrmQ.objects.all()]
    assert queued == ([SCORING_TASK] if session.status == "SUCCESS" else [])
