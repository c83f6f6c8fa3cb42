"""Load a realistic demo data set: a month of an SRE team's questions to the agent."""

from datetime import datetime, timedelta
from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from diagnosis.demo_data import DemoSession, demo_sessions
from diagnosis.models import DiagnosisSession, ToolInvocation


class Command(BaseCommand):
    help = "Load demo sessions, tool invocations and feedback (idempotent)."

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
            sessions = DiagnosisSession.objects.bulk_create(
                [_session(s, now) for s in missing], batch_size=500
            )
            # auto_now_add overwrote the spread-out creation times; put them back.
            for session, source in zip(sessions, missing, strict=True):
                session.created_at = _created_at(source, now)
            DiagnosisSession.objects.bulk_update(sessions, ["created_at"], batch_size=500)
            ToolInvocation.objects.bulk_create(
                [_invocation(s, inv) for s in missing for inv in s.invocations],
                batch_size=1000,
            )
        self.stdout.write(
            f"Demo data: {len(missing)} sessions added, {len(existing)} already present."
        )


def _created_at(source: DemoSession, now: datetime) -> datetime:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    moment = day - timedelta(days=source.days_ago) + timedelta(minutes=source.minutes_into_day)
    return min(moment, now)


def _session(source: DemoSession, now: datetime) -> DiagnosisSession:
    created = _created_at(source, now)
    finished = None if source.status == "RUNNING" else min(created + timedelta(minutes=2), now)
    return DiagnosisSession(
        session_id=source.session_id,
        user_id=source.user_id,
        query=source.query,
        status=source.status,
        answer=source.answer,
        feedback=source.feedback,
        finished_at=finished,
        feedback_at=finished if source.feedback else None,
    )


def _invocation(session: DemoSession, source: Any) -> ToolInvocation:
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
