"""A reader who rates an old session while the retention purge is deleting it: either the
rating is kept with its session, or it is refused (404) and nothing of it stays. Never a
200 for a session the purge then deletes, nor a case left without its session.

The purge is held mid-batch by a lock on one of the session's tool invocations, so the
reader's request arrives between the purge's choice of the batch and its delete."""

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from caselibrary.models import CaseLibrary
from caselibrary.services.cases import case_create_manual
from diagnosis.models import DiagnosisSession, ToolInvocation
from feedback.models import FeedbackEntry
from feedback.retention import sessions_purge
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory
from tests.row_lock_races import met

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


def _race(request: Callable[[], Any]) -> dict:
    """The purge held by a lock on the old session's tool invocation, `request` sent
    meanwhile, then the lock released."""
    invocation = ToolInvocation.objects.get()
    results = met(
        lambda: ToolInvocation.objects.select_for_update().get(pk=invocation.pk),
        lambda: sessions_purge(older_than=timedelta(days=180)),
        request,
    )
    return {"request": results["second"]}


@pytest.fixture
def old_session(db):  # type: ignore[no-untyped-def]
    session = DiagnosisSessionFactory(session_id="old-1", succeeded=True)
    ToolInvocationFactory(session=session)
    DiagnosisSession.objects.filter(pk=session.pk).update(
        created_at=timezone.now() - timedelta(days=365)
    )
    return session


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    return client


@pytest.mark.parametrize("feedback", ["useful", "not_useful"])
def test_a_rating_sent_while_the_purge_runs_is_kept_or_refused(
    make_client, old_session, feedback
) -> None:
    key = make_client("full").raw_key
    body = {"sessionId": "old-1", "feedback": feedback, "correction": "根因是主从延迟"}

    results = _race(lambda: _client(key).post("/api/feedback", body, format="json"))

    answer = results["request"]
    assert answer.status_code in (200, 404), answer.content
    kept = DiagnosisSession.objects.filter(session_id="old-1").exists()
    if answer.status_code == 200:
        assert kept
        assert DiagnosisSession.objects.get(session_id="old-1").feedback == feedback
    else:
        assert not kept
        assert not FeedbackEntry.objects.filter(session_id="old-1").exists()
    assert CaseLibrary.objects.filter(diagnosis_id="old-1").exists() == (
        kept and feedback == "useful"
    )


def test_a_case_written_from_a_session_while_the_purge_runs_keeps_its_session(
    old_session,
) -> None:
    def write_case() -> CaseLibrary:
        return case_create_manual(
            created_by="ops.li",
            title="主从延迟",
            root_cause="大事务",
            solution="拆分",
            diagnosis_id="old-1",
        )

    results = _race(write_case)

    case = CaseLibrary.objects.filter(diagnosis_id="old-1").first()
    if isinstance(results["request"], CaseLibrary):
        assert case is not None
        assert DiagnosisSession.objects.filter(session_id="old-1").exists()
    else:
        assert case is None
        assert not DiagnosisSession.objects.filter(session_id="old-1").exists()
