"""Writes for OTLP trace ingest: spans, their sessions and tool-invocation facts.

One request is one transaction: every span it accepts is stored with its session and
facts, or nothing is. A span already stored (an exporter's retry; the key is trace id +
span id) is skipped. Sessions follow their root span: SUCCESS when it ends OK or UNSET,
FAILED when it ends in ERROR; scoring is enqueued after the commit as for REST sessions,
and again, the opinion with it, when a session already scored gains or loses facts or
gets a late answer (exporters may split a trace; diagnosis.otlp_rescore).

What is stored otherwise than sent (a tool hint ignored, a session id no session can
have, a tool span without a tool name) is stored all the same and told: in the answer's
notes and in the request's one warning, with the notes about its body as read
(diagnosis.otlp_views). Only what cannot be stored is rejected.
"""

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction
from rest_framework import serializers

from config import metrics
from config.api import flatten_errors
from diagnosis.models import (
    DiagnosisSession,
    SessionStatus,
    Span,
    ToolCatalogEntry,
    ToolInvocation,
)
from diagnosis.otlp_completion import (
    Root,
    completion_set,
    completions_settled,
    roots_found,
)
from diagnosis.otlp_completion import unsettled as unsettled_after
from diagnosis.otlp_facts import tool_facts_body
from diagnosis.otlp_mapping import SpanRecord
from diagnosis.otlp_messages import question_of
from diagnosis.otlp_placeholders import placeholders_adopted, placeholders_joined
from diagnosis.otlp_races import RaceLost, retried
from diagnosis.otlp_rescore import scored_again, scored_on_completion
from diagnosis.otlp_session_keys import TraceSessions, trace_sessions
from diagnosis.serializers import tool_invocation_checked
from diagnosis.services import (
    InvocationFacts,
    stored_facts,
    stored_text,
)
from diagnosis.tool_catalog import Notes, catalog_add, catalog_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestResult:
    accepted: int
    duplicates: int
    rejected: list[str]  # one reason per span rejected
    notes: list[str] = field(default_factory=list)  # about spans stored, not rejected
    # The (trace id, span id) of the request's spans that are stored, now or before.
    kept: frozenset[tuple[str, str]] = frozenset()
    noted: tuple[str, str] | None = None  # the first span `notes` are about


def traces_ingest(*, records: list[SpanRecord], rejected: Iterable[str] = ()) -> IngestResult:
    """Store the spans of one request (already redacted and trimmed), all or nothing; a
    race lost to a request committing at the same time is retried (diagnosis.otlp_races)."""
    records, rejected = _unique(records), list(rejected)
    if not records:
        return IngestResult(0, 0, rejected)
    stored = retried(lambda: _stored(records, list(rejected)))
    if stored.new:
        traces = {r.trace_id for r in stored.new}
        retried(lambda: _split_traces_settled(traces, stored.unsettled))
    elif stored.kept:
        # An exporter's resend of spans all stored: the attempt that stored them may have
        # committed and then lost every race of its look at the trace (answered 503).
        traces = {r.trace_id for r in records}
        retried(lambda: _split_traces_settled(traces, traces))
    accepted, refused = len(stored.new), len(stored.rejected)
    duplicates = len(stored.kept) - accepted
    metrics.otlp_spans(accepted=accepted, duplicates=duplicates, rejected=refused)
    logger.info(
        "spans received", extra={"stored": accepted, "duplicates": duplicates, "rejected": refused}
    )
    notes, noted = _told(stored.new, stored.notes)
    return IngestResult(accepted, duplicates, stored.rejected, notes, stored.kept, noted)


@dataclass(frozen=True)
class _Stored:
    kept: frozenset[tuple[str, str]]  # the request's spans stored, now or before
    new: list[SpanRecord]  # stored now
    rejected: list[str]
    unsettled: set[str]  # traces whose session is running or has no answer yet
    notes: Notes


def _stored(records: list[SpanRecord], rejected: list[str]) -> _Stored:
    """One attempt: what it reads of the stored spans may have moved since an attempt
    that lost a race, so each reads it again."""
    notes: Notes = defaultdict(list)
    keys = trace_sessions(records, notes)
    sessions_by_trace = keys.sessions
    with transaction.atomic():
        catalog, unseen = catalog_of(records)
        kept, facts = _checked_facts(records, catalog, rejected, notes)
        stored = _stored_span_keys(kept)
        new = [r for r in kept if (r.trace_id, r.span_id) not in stored]
        new = _with_free_invocation_ids(new, sessions_by_trace, facts, rejected)
        # The catalog gains the tools of the spans stored, in the same transaction: a span
        # refused, or a request that fails, leaves nothing behind, not even a tool's name.
        catalog_add(unseen, new, notes)
        unsettled = _write(new, keys, facts) if new else set()
    return _Stored(
        frozenset(stored | {(r.trace_id, r.span_id) for r in new}), new, rejected, unsettled, notes
    )


def _split_traces_settled(traces: set[str], unsettled: set[str]) -> None:
    """Once committed, what a request committing at the same time may have kept each from
    seeing of the other: the placeholders of these traces that it filled move to their
    sessions (diagnosis.otlp_placeholders), and the sessions this request left running
    or without an answer are completed or answered from every committed span of their
    trace (diagnosis.otlp_completion). Sessions that gained facts this way, or their
    completion, are scored again."""
    with transaction.atomic():
        joined = placeholders_joined(traces)
        # A join may bring a session what the other request had unsettled.
        settled = completions_settled(traces if joined else unsettled)
        # A session settled is scored already; placeholders_joined locked these.
        scored_again(DiagnosisSession.objects.filter(session_id__in=joined - settled))


def _told(stored: list[SpanRecord], notes: Notes) -> tuple[list[str], tuple[str, str] | None]:
    """The notes about the spans this request stored, and the (trace id, span id) of the
    first span they are about: the notes about a span rejected, or stored by an earlier
    request, are not told again. The view logs them with the request's other notes."""
    told, first = [], None
    for record in stored:
        about = notes.get((record.trace_id, record.span_id), ())
        if about and first is None:
            first = (record.trace_id, record.span_id)
        told += about
    return told, first


def _checked_facts(
    records: list[SpanRecord],
    catalog: dict[str, ToolCatalogEntry],
    rejected: list[str],
    notes: Notes,
) -> tuple[list[SpanRecord], dict[tuple[str, str], InvocationFacts]]:
    """The spans kept, and the tool facts of the tool spans (by trace and span id), each
    checked by the REST API's validator; a tool span it refuses is rejected, with its
    reasons. A hint the fact ignored, or a tool span without a tool name (kept in the
    timeline, no evidence), is noted."""
    facts: dict[tuple[str, str], InvocationFacts] = {}
    kept = []
    for record in records:
        key = (record.trace_id, record.span_id)
        if record.role == "tool" and not record.tool_name:
            notes[key].append(
                f"工具 span {record.span_id}：没有工具名（gen_ai.tool.name、tool.name 或 span 名"
                " “execute_tool <工具名>”），已存入时间线，不计为工具调用"
            )
        elif record.role == "tool":
            body = tool_facts_body(record, catalog.get(record.tool_name))
            try:
                facts[key] = stored_facts(tool_invocation_checked(body.body))
            except serializers.ValidationError as exc:
                problems = "; ".join(
                    f"{name}: {' '.join(messages)}"
                    for name, messages in flatten_errors(exc.detail).items()
                )
                rejected.append(f"工具 span {record.span_id}：{problems}")
                continue
            notes[key] += [f"工具 span {record.span_id}：{reason}" for reason in body.ignored]
        kept.append(record)
    return kept, facts


def _unique(records: list[SpanRecord]) -> list[SpanRecord]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for record in records:
        key = (record.trace_id, record.span_id)
        if key not in seen:
            seen.add(key)
            unique.append(record)
    return unique


def _with_free_invocation_ids(
    records: list[SpanRecord],
    sessions_by_trace: dict[str, str],
    facts: dict[tuple[str, str], InvocationFacts],
    rejected: list[str],
) -> list[SpanRecord]:
    """`records` less the tool spans whose id already names a tool call of their session.
    A tool fact's invocationId is its span id, unique per session, and span ids are
    unique only within a trace: another trace of the session (one stored, or one earlier
    in this request) may have used it. Such a span is refused, with its reason, rather
    than stored without its fact or failing the whole request on the unique key."""
    wanted = {
        (sessions_by_trace[r.trace_id], r.span_id)
        for r in records
        if (r.trace_id, r.span_id) in facts
    }
    if not wanted:
        return records
    taken = set(
        ToolInvocation.objects.filter(
            session_id__in={session for session, _ in wanted},
            invocation_id__in={span for _, span in wanted},
        ).values_list("session_id", "invocation_id")
    )
    free = []
    for record in records:
        key = (sessions_by_trace[record.trace_id], record.span_id)
        if (record.trace_id, record.span_id) in facts:
            if key in taken:
                rejected.append(
                    f"工具 span {record.span_id}：会话 {key[0]} 已有同一 ID 的工具调用，来自"
                    "另一个 trace（span id 只在一个 trace 内唯一）"
                )
                continue
            taken.add(key)
        free.append(record)
    return free


def _stored_span_keys(records: list[SpanRecord]) -> set[tuple[str, str]]:
    """The (trace id, span id) of `records` already stored. Read by the two lists of ids,
    which also match (trace A, span of B): only the records' own pairs are kept."""
    keys = {(r.trace_id, r.span_id) for r in records}
    traces = {r.trace_id for r in records}
    span_ids = {r.span_id for r in records}
    return keys & set(
        Span.objects.filter(trace_id__in=traces, span_id__in=span_ids).values_list(
            "trace_id", "span_id"
        )
    )


def _write(
    records: list[SpanRecord],
    keys: TraceSessions,
    facts: dict[tuple[str, str], InvocationFacts],
) -> set[str]:
    """Stores the new spans with their sessions and facts; returns the traces whose
    session this left running or without an answer (diagnosis.otlp_completion)."""
    sessions_by_trace = keys.sessions
    by_session: dict[str, list[SpanRecord]] = defaultdict(list)
    for record in records:
        by_session[sessions_by_trace[record.trace_id]].append(record)
    sessions = _sessions_locked(by_session, also=keys.provisional)
    adopted = placeholders_adopted(
        sessions_by_trace={r.trace_id: sessions_by_trace[r.trace_id] for r in records},
        sessions=sessions,
        rooted=keys.rooted,
    )
    invocations = [
        ToolInvocation(session_id=session_id, **facts[record.trace_id, record.span_id])
        for session_id, group in by_session.items()
        for record in group
        if (record.trace_id, record.span_id) in facts
    ]
    Span.objects.bulk_create(
        [
            Span(
                session_id=sessions_by_trace[r.trace_id],
                trace_id=r.trace_id,
                span_id=r.span_id,
                parent_span_id=r.parent_span_id,
                name=r.name,
                role=r.role,
                is_error=r.is_error,
                started_at=r.started_at,
                ended_at=r.ended_at,
                arguments=r.arguments,
                result=r.result,
                error_message=r.error_message,
                attributes=r.attributes,
                truncated=r.truncated,
            )
            for r in records
        ]
    )
    ToolInvocation.objects.bulk_create(invocations)
    with_new_facts = {invocation.session_id for invocation in invocations} | adopted
    roots = roots_found(records)
    unsettled = set()
    for session_id, group in by_session.items():
        root = next((roots[r.trace_id] for r in group if roots.get(r.trace_id)), None)
        if isinstance(root, Span) and root.session_id != session_id:
            # A root stored meanwhile in the trace's placeholder, which another request
            # completed with it: the look after the commit joins the two, completion and all.
            root = None
        session = sessions[session_id]
        _session_update(session, group, root=root, rescore=session_id in with_new_facts)
        if unsettled_after(session, group, root):
            unsettled |= {r.trace_id for r in group}
    return unsettled


def _sessions_locked(
    by_session: dict[str, list[SpanRecord]], *, also: Iterable[str] = ()
) -> dict[str, DiagnosisSession]:
    """The sessions, created RUNNING when new, locked. Those there are locked in one
    statement together with the placeholders of their traces and the sessions `also`
    (the provisional sessions of traces a root named: placeholders_adopted moves both to
    them), so that requests of the same traces at once wait for each other rather
    than deadlock; only then are the new ones created. A session gone since it was read (a
    placeholder another request moved) is not created again: the attempt lost a race, and
    the next finds where the trace's spans went."""
    traces = {record.trace_id for group in by_session.values() for record in group}
    there = set(
        DiagnosisSession.objects.filter(session_id__in=list(by_session)).values_list(
            "session_id", flat=True
        )
    )
    locked = DiagnosisSession.objects.select_for_update().order_by("id")
    wanted = set(by_session) | traces | set(also)
    sessions = {s.session_id: s for s in locked.filter(session_id__in=wanted)}
    # Only those the lock did not find either: an insert that finds the row another
    # request inserted takes a shared lock on it, and two such requests deadlocked
    # locking it.
    missing = [
        DiagnosisSession(
            session_id=session_id,
            query=_question(group, session_id) or "",
            user_id=next((r.user_id for r in group if r.user_id), None),
            status=SessionStatus.RUNNING,
        )
        for session_id, group in sorted(by_session.items())
        if session_id not in sessions and session_id not in there
    ]
    if missing:
        # Another request may create one at the same time: the unique key keeps one.
        DiagnosisSession.objects.bulk_create(missing, ignore_conflicts=True)
        created = locked.filter(session_id__in=[session.session_id for session in missing])
        sessions.update({session.session_id: session for session in created})
    gone = sorted(set(by_session) - set(sessions))
    if gone:
        raise RaceLost(f"session {gone[0]!r} gone since it was read (moved by another request)")
    return {key: sessions[key] for key in by_session}


def _question(group: list[SpanRecord], session_id: str) -> str | None:
    """The question from the agent span, else from the earliest model call: the root's
    first, then those of the spans naming this session (not a sub-agent's, which names a
    conversation of its own and asks what the agent delegated). Stored as REST stores a
    query (stored_text): one of whitespace alone is none."""
    ordered = sorted(
        group,
        key=lambda r: (
            not r.is_root,
            bool(r.session_hint) and r.session_hint != session_id,
            r.role != "agent",
            r.started_at,
        ),
    )
    for record in ordered:
        if record.role in ("agent", "model"):
            text = stored_text(question_of(record.attributes))
            if text:
                return text
    return None


def _session_update(
    session: DiagnosisSession,
    group: list[SpanRecord],
    *,
    root: Root | None,
    rescore: bool,
) -> None:
    changed = []
    if not session.query:
        question = _question(group, session.session_id)
        if question:
            session.query = question
            changed.append("query")
    completed = False
    if root is not None and session.status == SessionStatus.RUNNING:
        changed += completion_set(session, root)
        completed = True
    if changed:
        session.save(update_fields=[*changed, "updated_at"])
    if rescore and not completed:
        scored_again([session])
    elif completed:
        scored_on_completion(session)
