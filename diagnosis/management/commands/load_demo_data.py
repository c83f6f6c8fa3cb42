"""Load a realistic demo data set: a month of an SRE team's questions to the agent."""

from datetime import datetime, timedelta
from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from caselibrary.models import CaseLibrary
from diagnosis.demo_data import DemoInvocation, DemoSession, demo_sessions
from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation
from evaluation.services import sessions_evaluate
from feedback.demo.case_library import load_case_library
from feedback.services import feedback_submit


class Command(BaseCommand):
    help = "Load demo sessions, tool invocations, scores, feedback and cases (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--count", type=int, default=300)

    def handle(self, *args: Any, count: int, **options: Any) -> None:
        demo = demo_sessions(count)
        existing = set(
            DiagnosisSession.objects.filter(
                session_id__in=[s.session_id for s in demo]
            ).values_list("session_id", flat=True)
        )
        missing = [s for s in demo if s.session_id not in existing]
        now = timezone.now()
        with transaction.atomic():
            _insert(missing, now)
            # Scored as the worker would have scored them when they turned SUCCESS.
            sessions_evaluate(
                sessions=[
                    (s.session_id, s.status) for s in missing if s.status == SessionStatus.SUCCESS
                ]
            )
            for source in missing:
                if source.feedback:
                    feedback_submit(session_id=source.session_id, feedback=source.feedback)
            _backdate_feedback(missing, now)
        library = load_case_library(now=now)
        self.stdout.write(
            f"Demo data: {len(missing)} sessions added, {len(existing)} already present; "
            f"{library.cases} library cases and {library.searches} sessions that search them "
            "added."
        )


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
