"""The in-process path: agents calling diagnosis/services.py behave as over REST."""

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django_q.models import OrmQ

from diagnosis import services
from diagnosis.models import DiagnosisSession, ToolInvocation
from evaluation.tasks import SCORING_TASK

pytestmark = pytest.mark.django_db


def test_an_agent_in_process_records_a_whole_session() -> None:
    session = services.session_start(session_id="inproc", query="Kafka consumer lag 不断上涨")
    recorded = services.invocations_record(
        session_id="inproc",
        invocations=[
            {
                "invocation_id": "1",
                "tool_name": "QueryKnowledgeBaseTools",
                "status": "SUCCESS",
                "match_level": "L1",
            },
            {
                "invocation_id": "1",
                "tool_name": "QueryKnowledgeBaseTools",
                "status": "SUCCESS",
                "match_level": "L1",
            },
            {"tool_name": "QueryMetricsTools", "kind": "other", "status": "SUCCESS"},
        ],
    )
    completed, changed = services.session_complete(
        session_id="inproc", status="SUCCESS", answer="扩容消费者"
    )

    assert session.status == "RUNNING"
    assert (recorded.received, recorded.created, recorded.duplicates) == (3, 2, 1)
    assert changed and completed.status == "SUCCESS"
    assert ToolInvocation.objects.filter(session_id="inproc").count() == 2


@pytest.mark.parametrize("session_id", ["", "with space", "x" * 65, "semi;colon", "ünï"])
def test_in_process_session_ids_follow_the_same_rule(session_id) -> None:
    with pytest.raises(ValidationError) as error:
        services.session_start(session_id=session_id, query="q")

    assert "session_id" in error.value.message_dict
    assert not DiagnosisSession.objects.exists()


def test_completing_to_success_enqueues_scoring_only_after_commit(
    django_capture_on_commit_callbacks,
) -> None:
    services.session_start(session_id="hook", query="q")

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.session_complete(session_id="hook", status="SUCCESS", answer="a")

    assert len(callbacks) == 1
    assert DiagnosisSession.objects.get().self_evaluation is None
    callbacks[0]()  # the commit happens: the (inline) task scores the session
    assert DiagnosisSession.objects.get().self_evaluation["factors"][0]["name"] == "no_tool_call"


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_completion_enqueues_nothing(monkeypatch) -> None:
    # A real broker (not the inline mode the suite uses) to see what gets queued.
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    services.session_start(session_id="rollback", query="q")

    with pytest.raises(RuntimeError), transaction.atomic():
        services.session_complete(session_id="rollback", status="SUCCESS", answer="a")
        assert OrmQ.objects.count() == 0  # not yet: the transaction is still open
        raise RuntimeError("the caller's transaction fails after completing")

    assert OrmQ.objects.count() == 0
    assert DiagnosisSession.objects.get().status == "RUNNING"

    services.session_complete(session_id="rollback", status="SUCCESS", answer="a")

    assert [task.func() for task in OrmQ.objects.all()] == [SCORING_TASK]
    assert DiagnosisSession.objects.get().self_evaluation is None  # queued, not yet run
