"""Load the demo data into the database: what `manage.py load_demo_data` does.

Two parts, each idempotent (what is present is left as it is):

1. `demo_sessions_load`: a month of an SRE team's questions to the agent, made by the
   pure generator in `sessions.py` from `topics.json`, `vocabulary.json` and `tools.json`,
   inserted in bulk with their tool facts, scored as the worker would have scored them,
   their feedback given through the feedback service.
2. `load_case_library` (`case_library.py`): the curated case library in `cases.json` and
   the sessions in `searches.json` that search it through the case-search service.

Each session's facts are then dated on its own clock (`sessions.py`), whatever time the
services stamped them with: its tool calls (and the searches they made) while it ran,
its score and opinion after it finished, its feedback and the case that made after that,
and the case's structuring and the hits it counts with them; nothing after the load.

A further part goes in `demo_data_load` as its own step, with its own module and data
file beside these.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Max, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from caselibrary.models import (
    SYSTEM_USER,
    CaseLibrary,
    CaseReuse,
    CaseSearch,
    CaseSearchHit,
    CaseStructuring,
)
from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation
from evaluation.services import opinions_enabled, sessions_evaluate, sessions_opinion_form
from feedback.demo.case_library import feedback_cases_date, load_case_library
from feedback.demo.sessions import (
    FEEDBACK_AFTER,
    OPINION_AFTER,
    SCORED_AFTER,
    SESSION_LENGTH,
    SESSION_STORY,
    STRUCTURED_AFTER,
    DemoInvocation,
    DemoSession,
    demo_sessions,
)
from feedback.services import feedback_submit


@dataclass(frozen=True)
class SessionsLoaded:
    session_ids: tuple[str, ...]  # added
    present: int

    @property
    def added(self) -> int:
        return len(self.session_ids)


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
    added = [*sessions.session_ids, *library.session_ids]
    if added:
        with transaction.atomic():
            # After the library learnt from them: its outcome sweep reads the searches
            # made in the last days, as they were when it ran.
            _session_facts_date(session_ids=library.session_ids, now=now)
            _library_facts_date(session_ids=added)
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
        added = tuple(s.session_id for s in missing)
        _session_facts_date(session_ids=added, now=now)
        feedback_cases_date(session_ids=[s.session_id for s in missing if s.feedback])
    return SessionsLoaded(session_ids=added, present=len(existing))


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


def _session_facts_date(*, session_ids: Sequence[str], now: datetime) -> None:
    """Date the facts of the sessions from their created_at and finished_at.

    Their tool calls run one after another within the session (and the case searches
    among them when they ran); the score and the opinion follow the answer, the feedback
    FEEDBACK_AFTER it; updated_at is the last of these. A running session's calls lie
    between its question and `now`.
    """
    sessions = list(
        DiagnosisSession.objects.filter(session_id__in=session_ids).only(
            "id", "session_id", "feedback", "created_at", "finished_at", "self_evaluation"
        )
    )
    calls: dict[str, list[ToolInvocation]] = defaultdict(list)
    for call in (
        ToolInvocation.objects.filter(session_id__in=session_ids)
        .only("id", "session_id", "duration_ms")
        .order_by("id")
    ):
        calls[call.session_id].append(call)
    opinions = []
    for session in sessions:
        ran = calls[session.session_id]
        end = session.finished_at or min(session.created_at + SESSION_LENGTH, now)
        ended = _calls_ended(session.created_at, end, [c.duration_ms or 0 for c in ran])
        for call, when in zip(ran, ended, strict=True):
            call.created_at = when
        last = max([session.created_at, session.finished_at or session.created_at, *ended])
        if session.self_evaluation:
            scored = session.finished_at + SCORED_AFTER
            last = max(last, scored)
            opinion = session.self_evaluation.get("llm_opinion")
            if opinion:
                opinion["created_at"] = (scored + OPINION_AFTER).isoformat()
                opinions.append(session)
        session.feedback_at = None
        if session.feedback:
            session.feedback_at = session.finished_at + FEEDBACK_AFTER
            last = max(last, session.feedback_at)
        session.updated_at = last
    DiagnosisSession.objects.bulk_update(sessions, ["feedback_at", "updated_at"], batch_size=500)
    # Only the scores whose opinion was dated: no other score changed.
    DiagnosisSession.objects.bulk_update(opinions, ["self_evaluation"], batch_size=500)
    ToolInvocation.objects.bulk_update(
        [call for ran in calls.values() for call in ran], ["created_at"], batch_size=500
    )
    made = ToolInvocation.objects.filter(
        session_id=OuterRef("session_id"), invocation_id=OuterRef("invocation_id")
    ).values("created_at")[:1]
    CaseSearch.objects.filter(session_id__in=session_ids).update(created_at=Subquery(made))


def _calls_ended(start: datetime, end: datetime, durations_ms: list[int]) -> list[datetime]:
    """When each call ended, run in order with equal pauses (the agent thinking) between
    the start, the calls and the end; calls longer than the whole are squeezed in."""
    durations = [timedelta(milliseconds=ms) for ms in durations_ms]
    total = sum(durations, timedelta())
    if total > end - start:
        durations = [d * ((end - start) / total) for d in durations]
        total = end - start
    pause = (end - start - total) / (len(durations) + 1)
    ended: list[datetime] = []
    moment = start
    for duration in durations:
        moment += pause + duration
        ended.append(moment)
    return ended


def _library_facts_date(*, session_ids: list[str]) -> None:
    """Date what the library made of the sessions, from the times of their facts: the
    last hit of each case they found, the structuring of each case they made."""
    found = CaseSearchHit.objects.filter(session_id__in=session_ids).values("case_id")
    last_hit = (
        # A repeated recall counts no hit (caselibrary.services.search).
        CaseSearchHit.objects.filter(case_id=OuterRef("case_id"), search__repeat_of__isnull=True)
        .values("case_id")
        .annotate(last=Max("search__created_at"))
        .values("last")
    )
    CaseReuse.objects.filter(case_id__in=found, last_hit_at__isnull=False).update(
        last_hit_at=Coalesce(Subquery(last_hit), F("last_hit_at"))
    )
    made = CaseLibrary.objects.filter(case_id=OuterRef("case_id")).values("created_at")[:1]
    CaseStructuring.objects.filter(case__diagnosis_id__in=session_ids).update(
        proposed_at=Subquery(made) + STRUCTURED_AFTER
    )
    # The structuring changed the cases it filled (those no operator saved) then too.
    CaseLibrary.objects.filter(
        diagnosis_id__in=session_ids, updated_by=SYSTEM_USER, structuring__isnull=False
    ).update(updated_at=F("created_at") + STRUCTURED_AFTER)


def _created_at(source: DemoSession, now: datetime) -> datetime:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    moment = day - timedelta(days=source.days_ago) + timedelta(minutes=source.minutes_into_day)
    return min(moment, now - SESSION_STORY)


def _finished_at(source: DemoSession, now: datetime) -> datetime:
    return _created_at(source, now) + SESSION_LENGTH


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
