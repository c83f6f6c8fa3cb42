"""The demo data tells each session's story in time: its tool calls while it ran, its score,
opinion and feedback after it finished, the searches, cases and hits it made dated with
it, and nothing later than the moment it was loaded."""

import io
from collections import defaultdict
from datetime import datetime, timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from caselibrary.models import CaseLibrary, CaseReuse, CaseSearch, CaseSearchHit, CaseStructuring
from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation
from feedback.models import FeedbackEntry

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _on_a_development_machine(settings) -> None:
    # load_demo_data runs with DEBUG=1 only, as `make run` sets it.
    settings.DEBUG = True
    settings.OPINION_PROVIDER = "heuristic"


def load() -> datetime:
    """Load the demo data; the moment it was done."""
    call_command("load_demo_data", count=60, stdout=io.StringIO())
    return timezone.now()


def sessions() -> dict[str, DiagnosisSession]:
    found = {s.session_id: s for s in DiagnosisSession.objects.all()}
    assert len(found) > 60  # the generated sessions and those that search the library
    return found


def test_demo_tool_calls_lie_within_their_sessions_in_the_order_they_were_made() -> None:
    now = load()

    by_session = defaultdict(list)
    for call in ToolInvocation.objects.order_by("id"):
        by_session[call.session_id].append(call)
    assert len(by_session) > 40
    for session_id, session in sessions().items():
        end = session.finished_at or now
        calls = by_session[session_id]
        for call in calls:
            began = call.created_at - timedelta(milliseconds=call.duration_ms or 0)
            assert session.created_at <= began <= call.created_at <= end <= now, session_id
        times = [call.created_at for call in calls]
        assert times == sorted(times), session_id


def test_demo_sessions_finish_before_they_are_scored_rated_and_touched_last() -> None:
    now = load()

    scored = 0
    for session_id, session in sessions().items():
        assert session.created_at <= session.updated_at <= now, session_id
        if session.status == SessionStatus.RUNNING:
            assert session.finished_at is None and session.feedback_at is None, session_id
            continue
        assert session.created_at < session.finished_at <= session.updated_at, session_id
        if session.self_evaluation:
            opinion = datetime.fromisoformat(session.self_evaluation["llm_opinion"]["created_at"])
            assert session.finished_at < opinion <= now, session_id
            scored += 1
        if session.feedback:
            assert session.finished_at < session.feedback_at <= session.updated_at, session_id
        else:
            assert session.feedback_at is None, session_id
    assert scored > 30


def test_demo_feedback_history_and_the_cases_feedback_made_come_after_the_session() -> None:
    now = load()

    finished = {sid: s.finished_at for sid, s in sessions().items()}
    rated = {sid: s.feedback_at for sid, s in sessions().items() if s.feedback}
    for entry in FeedbackEntry.objects.all():
        assert finished[entry.session_id] < entry.created_at <= now, entry.session_id
    cases = CaseLibrary.objects.filter(diagnosis_id__isnull=False)
    assert cases.count() > 10
    structured = dict(
        CaseStructuring.objects.filter(case__in=cases).values_list("case_id", "proposed_at")
    )
    assert structured
    for case in cases:
        assert case.created_at == rated[case.diagnosis_id], case.case_id
        # A case the structuring filled was changed then; the others when they were made.
        assert case.updated_at == structured.get(case.case_id, case.created_at), case.case_id
        assert case.created_at <= case.updated_at <= now, case.case_id


def test_demo_case_searches_and_the_hits_they_count_are_dated_with_their_sessions() -> None:
    now = load()

    every = sessions()
    calls = {
        (call.session_id, call.invocation_id): call.created_at
        for call in ToolInvocation.objects.filter(tool_name="CaseLibrarySearch")
    }
    searches = list(CaseSearch.objects.all())
    assert len(searches) > 10
    for search in searches:
        session = every[search.session_id]
        assert search.created_at == calls[(search.session_id, search.invocation_id)]
        assert session.created_at <= search.created_at <= session.finished_at <= now
    last_hits = defaultdict(list)
    for hit in CaseSearchHit.objects.filter(search__repeat_of__isnull=True):
        last_hits[hit.case_id].append(hit.search.created_at)
    reused = CaseReuse.objects.filter(last_hit_at__isnull=False)
    assert reused.exists()
    for reuse in reused:
        assert reuse.last_hit_at == max(last_hits[reuse.case_id]), reuse.case_id


def test_loading_the_demo_data_again_moves_no_time() -> None:
    load()
    before = (
        sorted(DiagnosisSession.objects.values_list("session_id", "updated_at", "feedback_at")),
        sorted(ToolInvocation.objects.values_list("id", "created_at")),
        sorted(CaseSearch.objects.values_list("id", "created_at")),
    )

    load()

    assert (
        sorted(DiagnosisSession.objects.values_list("session_id", "updated_at", "feedback_at")),
        sorted(ToolInvocation.objects.values_list("id", "created_at")),
        sorted(CaseSearch.objects.values_list("id", "created_at")),
    ) == before
