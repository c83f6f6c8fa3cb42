"""The in-process path: agents calling diagnosis/services.py behave as over REST.

The services trust their typed arguments; the API validates its input once, at the edge,
with a validator in-process callers may use too."""

import pytest
from django.db import transaction
from django_q.models import OrmQ

from diagnosis import services
from diagnosis.exceptions import SessionNotFound
from diagnosis.models import DiagnosisSession, ToolInvocation
from diagnosis.serializers import tool_invocations_checked
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


def test_in_process_callers_may_check_their_facts_with_the_api_validator() -> None:
    services.session_start(session_id="v", query="q")
    body = [
        {"invocationId": "1", "toolName": "QueryKnowledgeBaseTools", "status": "SUCCESS"},
        {"toolName": "QueryMetricsTools", "kind": "other", "status": "FAILED"},
    ]

    recorded = services.invocations_record(
        session_id="v", invocations=tool_invocations_checked(body)
    )

    assert (recorded.received, recorded.created) == (2, 2)
    stored = ToolInvocation.objects.order_by("id").values_list("tool_name", "kind", "hit_count")
    assert list(stored) == [
        ("QueryKnowledgeBaseTools", "retrieval", 0),
        ("QueryMetricsTools", "other", 0),
    ]


def test_facts_for_an_unknown_session_are_refused_and_nothing_is_stored() -> None:
    with pytest.raises(SessionNotFound):
        services.invocations_record(
            session_id="nobody", invocations=[{"tool_name": "t", "status": "SUCCESS"}]
        )

    assert not ToolInvocation.objects.exists()


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
