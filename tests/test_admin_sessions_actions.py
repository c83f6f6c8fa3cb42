"""The sessions admin's actions: rescore the selected sessions, create a case from one."""

import pytest
from django.contrib.admin.models import ADDITION, LogEntry

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession
from tests.admin_session_pages import LIST
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    ToolInvocationFactory,
    evaluation,
)
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]


# --- actions ---------------------------------------------------------------------------


def act(client, action: str, *sessions: DiagnosisSession, follow: bool = False):  # type: ignore[no-untyped-def]
    return client.post(
        LIST,
        {"action": action, "_selected_action": [s.pk for s in sessions], "index": 0},
        follow=follow,
    )


def test_rescore_scores_the_selected_sessions_from_their_facts(
    admin_client, django_capture_on_commit_callbacks
) -> None:
    finished = DiagnosisSessionFactory(succeeded=True, self_evaluation=evaluation(0))
    ToolInvocationFactory(session=finished, match_level="L0")
    running = DiagnosisSessionFactory()
    untouched = DiagnosisSessionFactory(succeeded=True)

    # The action queues the scoring after the request commits; Q_SYNC runs it inline.
    with django_capture_on_commit_callbacks(execute=True):
        response = act(admin_client, "rescore", finished, running, follow=True)

    finished.refresh_from_db()
    assert finished.self_evaluation["evidence_score"] == 65
    assert DiagnosisSession.objects.get(pk=running.pk).self_evaluation is None
    assert DiagnosisSession.objects.get(pk=untouched.pk).self_evaluation is None
    page = text(response)
    assert "1 session queued for rescoring." in page
    assert "1 session is still running and was left alone." in page


def test_rescore_refuses_a_selection_that_belongs_to_the_command(admin_client, monkeypatch) -> None:
    monkeypatch.setattr("feedback.admin.sessions.RESCORE_LIMIT", 2)
    sessions = DiagnosisSessionFactory.create_batch(3, succeeded=True)

    response = act(admin_client, "rescore", *sessions, follow=True)

    assert "manage.py rescore" in text(response)
    assert not DiagnosisSession.objects.filter(self_evaluation__isnull=False).exists()


def test_create_case_opens_a_manual_case_prefilled_from_the_session(admin_client) -> None:
    session = DiagnosisSessionFactory(
        session_id="s-7", succeeded=True, query="Q" * 150, answer="根因\n处理"
    )

    response = act(admin_client, "create_case", session)

    assert response.status_code == 302
    assert response.url == "/admin/caselibrary/caselibrary/add/?from_session=s-7"
    form = admin_client.get(response.url).context["adminform"].form
    assert form.initial["title"] == "Q" * 100
    assert form.initial["root_cause"] == form.initial["solution"] == "根因\n处理"
    assert form.initial["diagnosis"] == "s-7"


def test_create_case_saves_through_the_service_as_manual(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="s-7", succeeded=True)

    response = admin_client.post(
        "/admin/caselibrary/caselibrary/add/?from_session=s-7",
        {
            "diagnosis": "s-7",
            "title": "Pool exhausted",
            "fault_category": "DATABASE",
            "error_code": "E504",
            "root_cause": "pool",
            "solution": "grow it",
        },
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    case = CaseLibrary.objects.get()
    assert (case.source_type, case.diagnosis_id, case.created_by, case.updated_by) == (
        "MANUAL",
        session.session_id,
        "admin",
        "admin",
    )
    assert LogEntry.objects.get(object_id=case.pk).action_flag == ADDITION


def test_create_case_on_a_session_with_a_case_goes_to_that_case(admin_client) -> None:
    session = DiagnosisSessionFactory(useful=True)
    case = CaseLibraryFactory(diagnosis=session)

    response = act(admin_client, "create_case", session)

    assert response.status_code == 302
    assert response.url == f"/admin/caselibrary/caselibrary/{case.pk}/change/"
    assert CaseLibrary.objects.count() == 1


def test_create_case_wants_exactly_one_session(admin_client) -> None:
    sessions = DiagnosisSessionFactory.create_batch(2, succeeded=True)

    response = act(admin_client, "create_case", *sessions, follow=True)

    assert "Select exactly one session" in text(response)
    assert not CaseLibrary.objects.exists()


def test_the_create_case_action_refuses_a_running_session(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="s-running-7")

    response = act(admin_client, "create_case", session, follow=True)

    assert response.redirect_chain[-1][0] == LIST
    assert "Session s-running-7 has no answer to make a case of" in text(response)
    assert not CaseLibrary.objects.exists()


def test_rescore_queues_the_finished_sessions_once_the_request_commits(
    admin_client, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    # django-q2's enqueue is replaced to see what the workers would be handed.
    queued: list[tuple] = []
    monkeypatch.setattr("config.queue.async_task", lambda *args, **kw: queued.append(args))
    finished = DiagnosisSessionFactory(succeeded=True)
    failed = DiagnosisSessionFactory(failed=True)
    running = DiagnosisSessionFactory()

    with django_capture_on_commit_callbacks(execute=True):
        response = act(admin_client, "rescore", finished, failed, running, follow=True)

    [(task, session_ids)] = queued
    assert task == "evaluation.tasks.sessions_rescore"
    assert sorted(session_ids) == sorted([finished.session_id, failed.session_id])
    assert "2 sessions queued for rescoring." in text(response)
    assert "1 session is still running and was left alone." in text(response)
