"""A reader who rates an old session while the retention purge is deleting it: either the
rating is kept with its session, or it is refused (404) and nothing of it stays. Never a
200 for a session the purge then deletes, nor a case left without its session.

The purge is held mid-batch by a lock on one of the session's tool invocations, so the
reader's request arrives between the purge's choice of the batch and its delete."""

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from caselibrary.models import CaseLibrary
from caselibrary.services.cases import case_create_manual
from diagnosis.models import DiagnosisSession, ToolInvocation
from feedback.models import FeedbackEntry
from feedback.retention import sessions_purge
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]

WAIT = 30


def _waiting_statements() -> int:
    """Statements of the other connections to the test database that are running now
    (blocked on a row lock, as nothing else here takes long)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
            " WHERE db = DATABASE() AND command = 'Query' AND id <> CONNECTION_ID()"
        )
        return cursor.fetchone()[0]


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the purge or the request never came to wait"
        time.sleep(0.05)


def _in_thread(work: Callable[[], Any], results: dict, name: str) -> threading.Thread:
    def run() -> None:
        try:
            results[name] = work()
        except Exception as exc:  # the test reads what happened
            results[name] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _race(key: str, request: Callable[[], Any]) -> dict:
    """The purge held by a lock on the old session's tool invocation, `request` sent
    meanwhile, then the lock released."""
    invocation = ToolInvocation.objects.get()
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with transaction.atomic():
            ToolInvocation.objects.select_for_update().get(pk=invocation.pk)
            held.set()
            release.wait(WAIT)

    results: dict = {}
    holder = _in_thread(hold, results, "holder")
    assert held.wait(WAIT)
    purge = _in_thread(lambda: sessions_purge(older_than=timedelta(days=180)), results, "purge")
    _until(lambda: _waiting_statements() >= 1 or "purge" in results)
    assert "purge" not in results, results
    sent = _in_thread(request, results, "request")
    # The request either answers at once or comes to wait behind the purge.
    _until(lambda: "request" in results or _waiting_statements() >= 2)
    release.set()
    for thread in (holder, purge, sent):
        thread.join(WAIT)
    return results


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

    results = _race(key, lambda: _client(key).post("/api/feedback", body, format="json"))

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
    make_client, old_session
) -> None:
    key = make_client("full").raw_key

    def write_case() -> CaseLibrary:
        return case_create_manual(
            created_by="ops.li",
            title="主从延迟",
            root_cause="大事务",
            solution="拆分",
            diagnosis_id="old-1",
        )

    results = _race(key, write_case)

    case = CaseLibrary.objects.filter(diagnosis_id="old-1").first()
    if isinstance(results["request"], CaseLibrary):
        assert case is not None
        assert DiagnosisSession.objects.filter(session_id="old-1").exists()
    else:
        assert case is None
        assert not DiagnosisSession.objects.filter(session_id="old-1").exists()
