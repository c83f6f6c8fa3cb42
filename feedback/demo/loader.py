"""Load the demo data into the database: what `manage.py load_demo_data` does.

Two parts, each idempotent (what is present is left as it is):

1. `demo_sessions_load`: a month of an SRE team's questions to the agent, made by the
   pure generator in `sessions.py` from `topics.json`, `vocabulary.json` and `tools.json`,
   inserted in bulk with their tool facts, scored as the worker would have scored them,
   their feedback given through the feedback service.
2. `load_case_library` (`case_library.py`): the curated case library in `cases.json` and
   the sessions in `searches.json` that search it through the case-search service.

A further part goes in `demo_data_load` as its own step, with its own module and data
file beside these.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation
from evaluation.services import opinions_enabled, sessions_evaluate, sessions_opinion_form
from feedback.demo.case_library import load_case_library
from feedback.demo.sessions import DemoInvocation, DemoSession, demo_sessions
from feedback.services import feedback_submit


@dataclass(frozen=True)
class SessionsLoaded:
    added: int
    present: int


@dataclass(frozen=True)
class DemoLoaded:
    sessions_added: int
    sessions_present: int
    cases: int
    searches: int


def demo_data_load(*, count: int, now: datetime | None = None) -> DemoLoaded:
    """Add whatever of the demo data is missing."""
    now = now or timezone.now()
    sessions = demo_sessions_load(count=count, now=now)
    library = load_case_library(now=now)
    return DemoLoaded(
        sessions_added=sessions.added,
        sessions_present=sessions.present,
        cases=library.cases,
        searches=library.searches,
    )


def demo_sessions_load(*, count: int, now: datetime) -> SessionsLoaded:
    """Add the first `count` generated sessions that are missing, spread over the month."""
    demo = demo_sessions(count)
    existing = set(
        DiagnosisSession.objects.filter(session_id__in=[s.session_id for s in demo]).values_list(
            "session_id", flat=True
        )
    )
    missing = [s for s in demo if s.session_id not in existing]
    with transaction.atomic():
        _insert(missing, now)
        # Scored as the worker would have scored them when they turned SUCCESS, with the
        # opinion the configured provider forms next (none when it is off).
        succeeded = [s.session_id for s in missing if s.status == SessionStatus.SUCCESS]
        sessions_evaluate(sessions=[(sid, SessionStatus.SUCCESS) for sid in succeeded])
        if opinions_enabled():
            sessions_opinion_form(session_ids=succeeded)
        for source in missing:
            if source.feedback:
                feedback_submit(session_id=source.session_id, feedback=source.feedback)
        _backdate_feedback(missing, now)
    return SessionsLoaded(added=len(missing), present=len(existing))


def _insert(missing: list[DemoSession], now: datetime) -> None:
    sessions = DiagnosisSession.objects.bulk_create(
        [_session(s, now) for s in missing], batch_size=500
    )
    # auto_now_add stamped them all "now"; spread them over the month again.
    for session, source in zip(sessions, missing, strict=True):
        session.created_at = _created_at(source, now)
    DiagnosisSession.objects.bulk_update(sessions, ["created_at"], batch_size=500)
    ToolInvocation.objects.bulk_create(
        [_invocation(s, inv) for s in missing for inv in s.invocations], batch_size=1000
    )


def _backdate_feedback(missing: list[DemoSession], now: datetime) -> None:
    for source in missing:
        if not source.feedback:
            continue
        given = min(_finished_at(source, now) + timedelta(minutes=7), now)
        DiagnosisSession.objects.filter(session_id=source.session_id).update(feedback_at=given)
        CaseLibrary.objects.filter(diagnosis_id=source.session_id).update(
            created_at=given, updated_at=given
        )


def _created_at(source: DemoSession, now: datetime) -> datetime:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    moment = day - timedelta(days=source.days_ago) + timedelta(minutes=source.minutes_into_day)
    return min(moment, now)


def _finished_at(source: DemoSession, now: datetime) -> datetime:
    return min(_created_at(source, now) + timedelta(minutes=2), now)


def _session(source: DemoSession, now: datetime) -> DiagnosisSession:
    running = source.status == SessionStatus.RUNNING
    return DiagnosisSession(
        session_id=source.session_id,
        user_id=source.user_id,
        query=source.query,
        status=source.status,
        answer=source.answer,
        finished_at=None if running else _finished_at(source, now),
    )


def _invocation(session: DemoSession, source: DemoInvocation) -> ToolInvocation:
    return ToolInvocation(
        session_id=session.session_id,
        invocation_id=source.invocation_id,
        tool_name=source.tool_name,
        kind=source.kind,
        status=source.status,
        match_level=source.match_level,
        hit_count=source.hit_count,
        query=source.query,
        error_message=source.error_message,
        duration_ms=source.duration_ms,
    )
