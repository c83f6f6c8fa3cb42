"""Writes for OTLP trace ingest: spans, their sessions and tool-invocation facts.

One request is one transaction: every span it accepts is stored with its session and
facts, or nothing is. A span already stored (an exporter's retry; the key is trace id +
span id) is skipped. Sessions follow their root span: SUCCESS when it ends OK or UNSET,
FAILED when it ends in ERROR; scoring is enqueued after the commit as for REST sessions,
and again when facts arrive for a session already scored (exporters may split a trace).

What is stored otherwise than sent (a tool hint ignored, a session id no session can
have, a tool span without a tool name) is stored all the same and told: in the answer's
notes and in a warning naming the span. Only what cannot be stored is rejected.
"""

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from rest_framework import serializers

from config import metrics
from config.api import flatten_errors
from config.queue import enqueue_on_commit
from diagnosis.models import (
    SESSION_ID_PATTERN,
    DiagnosisSession,
    SessionStatus,
    Span,
    ToolCatalogEntry,
    ToolInvocation,
    ToolKind,
)
from diagnosis.otlp_facts import tool_facts_body
from diagnosis.otlp_mapping import REMOTE_PARENT_ATTRIBUTE, KnownSpan, SpanRecord, root_span_id
from diagnosis.otlp_messages import answer_of, question_of
from diagnosis.otlp_placeholders import placeholders_adopted, placeholders_joined
from diagnosis.serializers import tool_invocation_checked
from diagnosis.services import SCORING_GROUP, SCORING_TASK, InvocationFacts

logger = logging.getLogger(__name__)

# What was read otherwise than sent, by the trace and span id of the span it is about.
Notes = dict[tuple[str, str], list[str]]


@dataclass(frozen=True)
class IngestResult:
    accepted: int
    duplicates: int
    rejected: list[str]  # one reason per span rejected
    notes: list[str] = field(default_factory=list)  # about spans stored, not rejected


def traces_ingest(*, records: list[SpanRecord], rejected: Iterable[str] = ()) -> IngestResult:
    """Store the spans of one request (already redacted and trimmed), all or nothing."""
    rejected = list(rejected)
    records = _unique(records)
    if not records:
        return IngestResult(0, 0, rejected)
    notes: Notes = defaultdict(list)
    sessions_by_trace = _sessions_by_trace(records, notes)
    with transaction.atomic():
        catalog, unseen = _catalog(records)
        kept, facts = _checked_facts(records, catalog, rejected, notes)
        stored = _stored_span_keys(kept)
        new = [r for r in kept if (r.trace_id, r.span_id) not in stored]
        new = _with_free_invocation_ids(new, sessions_by_trace, facts, rejected)
        # The catalog gains the tools of the spans stored, in the same transaction: a span
        # refused, or a request that fails, leaves nothing behind, not even a tool's name.
        _catalog_add(unseen, {r.tool_name for r in new if r.tool_name})
        if new:
            _write(new, sessions_by_trace, facts)
    if new:
        _split_traces_joined({r.trace_id for r in new})
    duplicates = len(kept) - len([r for r in kept if (r.trace_id, r.span_id) not in stored])
    metrics.otlp_spans(accepted=len(new), duplicates=duplicates, rejected=len(rejected))
    logger.info(
        "spans received",
        extra={"stored": len(new), "duplicates": duplicates, "rejected": len(rejected)},
    )
    return IngestResult(len(new), duplicates, rejected, _told(new, notes))


def _split_traces_joined(traces: set[str]) -> None:
    """Once committed: the placeholders of these traces that a request committing at the
    same time filled (see diagnosis.otlp_placeholders) moved to their sessions, which are
    scored again when they gained facts or their completion."""
    with transaction.atomic():
        for session_id in placeholders_joined(traces):
            session = DiagnosisSession.objects.get(session_id=session_id)
            if session.status == SessionStatus.SUCCESS:
                enqueue_on_commit(SCORING_TASK, session_id, group=SCORING_GROUP)


def _told(stored: list[SpanRecord], notes: Notes) -> list[str]:
    """The notes about the spans this request stored, each logged with its span: the
    notes about a span rejected, or stored by an earlier request, are not told again."""
    told = []
    for record in stored:
        for note in notes.get((record.trace_id, record.span_id), ()):
            logger.warning(
                "span stored with a note: %s",
                note,
                extra={"trace_id": record.trace_id, "span_id": record.span_id},
            )
            told.append(note)
    return told


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
                facts[key] = tool_invocation_checked(body.body)
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


def _sessions_by_trace(records: list[SpanRecord], notes: Notes) -> dict[str, str]:
    """Each trace's session id: a session attribute on any of its spans in this request,
    else the session its spans already stored went to, else the trace id. A session id no
    session can have is ignored and noted: the span is read as one without it (a root
    still completes its session, under the trace id), not rejected."""
    hints: dict[str, str | None] = {}
    ignored = []
    for record in records:
        hint = record.session_hint
        if hint and not SESSION_ID_PATTERN.match(hint):
            ignored.append(record)
            hint = None
        if hint and not hints.get(record.trace_id):
            hints[record.trace_id] = hint
        else:
            hints.setdefault(record.trace_id, None)
    unhinted = [trace for trace, hint in hints.items() if hint is None]
    known = dict(
        Span.objects.filter(trace_id__in=unhinted).values_list("trace_id", "session_id").distinct()
        if unhinted
        else []
    )
    sessions = {trace: hint or known.get(trace) or trace for trace, hint in hints.items()}
    for record in ignored:
        shown = (record.session_hint or "")[:80]
        notes[record.trace_id, record.span_id].append(
            f"span {record.span_id}：会话 ID {shown!r} 无效（须为 1-64 个 A-Za-z0-9._:- 字符），"
            f"已忽略；trace {record.trace_id} 的 span 归入会话 {sessions[record.trace_id]}"
        )
    return sessions


def _catalog(
    records: list[SpanRecord],
) -> tuple[dict[str, ToolCatalogEntry], list[ToolCatalogEntry]]:
    """The catalog entries of the tools in `records`, and those of the names not in the
    catalog yet (with the catalog's defaults, not saved: _catalog_add saves them)."""
    names: dict[str, bool] = {}
    for record in records:
        if record.role == "tool" and record.tool_name:
            names[record.tool_name] = names.get(record.tool_name, False) or record.is_retriever
    if not names:
        return {}, []
    entries = {e.tool_name: e for e in ToolCatalogEntry.objects.filter(tool_name__in=names)}
    unseen = [
        ToolCatalogEntry(tool_name=name, kind=ToolKind.RETRIEVAL if retriever else ToolKind.OTHER)
        for name, retriever in names.items()
        if name not in entries and len(name) <= 128
    ]
    return {**entries, **{e.tool_name: e for e in unseen}}, unseen


def _catalog_add(unseen: list[ToolCatalogEntry], names: set[str]) -> None:
    entries = [entry for entry in unseen if entry.tool_name in names]
    if entries:
        # Two requests may add the same name at once: the unique key keeps one.
        ToolCatalogEntry.objects.bulk_create(entries, ignore_conflicts=True)


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
    traces = {r.trace_id for r in records}
    span_ids = {r.span_id for r in records}
    return set(
        Span.objects.filter(trace_id__in=traces, span_id__in=span_ids).values_list(
            "trace_id", "span_id"
        )
    )


def _write(
    records: list[SpanRecord],
    sessions_by_trace: dict[str, str],
    facts: dict[tuple[str, str], InvocationFacts],
) -> None:
    by_session: dict[str, list[SpanRecord]] = defaultdict(list)
    for record in records:
        by_session[sessions_by_trace[record.trace_id]].append(record)
    sessions = _sessions_locked(by_session)
    adopted = placeholders_adopted(
        sessions_by_trace={r.trace_id: sessions_by_trace[r.trace_id] for r in records},
        sessions=sessions,
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
    roots = _roots(records)
    for session_id, group in by_session.items():
        root = next((roots[r.trace_id] for r in group if roots.get(r.trace_id)), None)
        _session_update(
            sessions[session_id], group, root=root, rescore=session_id in with_new_facts
        )


def _roots(records: list[SpanRecord]) -> dict[str, SpanRecord | Span]:
    """The root of each trace of `records` that this request found: one of its spans, or
    a span stored earlier that the agent's run (in this request) now lies below. The new
    spans are written by now, so the table holds every span known for these traces. A
    trace whose span with no parent was stored earlier has no root here: that span
    completed its session then, and a span with a remote parent does not displace it."""
    roots: dict[str, SpanRecord | Span] = {}
    for record in records:
        if record.is_root and record.trace_id not in roots:
            roots[record.trace_id] = record
    others = {r.trace_id for r in records} - set(roots)
    if not others:
        return roots
    new = {(r.trace_id, r.span_id): r for r in records}
    spans = Span.objects.filter(trace_id__in=others)
    remote = set(
        spans.filter(attributes__has_key=REMOTE_PARENT_ATTRIBUTE).values_list("trace_id", "span_id")
    )
    known: dict[str, list[KnownSpan]] = defaultdict(list)
    for trace, span_id, parent, role, started in spans.values_list(
        "trace_id", "span_id", "parent_span_id", "role", "started_at"
    ):
        known[trace].append(KnownSpan(span_id, parent, role, (trace, span_id) in remote, started))
    for trace in others:
        root_id = root_span_id(known[trace])
        if (trace, root_id) in new:
            roots[trace] = new[trace, root_id]
        elif root_id is not None and (trace, root_id) in remote:
            roots[trace] = Span.objects.get(trace_id=trace, span_id=root_id)
    return roots


def _sessions_locked(by_session: dict[str, list[SpanRecord]]) -> dict[str, DiagnosisSession]:
    """The sessions, created RUNNING when new, locked in primary-key order."""
    ids = sorted(by_session)
    existing = set(
        DiagnosisSession.objects.filter(session_id__in=ids).values_list("session_id", flat=True)
    )
    missing = []
    for session_id in ids:
        if session_id not in existing:
            group = by_session[session_id]
            missing.append(
                DiagnosisSession(
                    session_id=session_id,
                    query=_question(group) or "",
                    user_id=next((r.user_id[:64] for r in group if r.user_id), None),
                    status=SessionStatus.RUNNING,
                )
            )
    if missing:
        DiagnosisSession.objects.bulk_create(missing, ignore_conflicts=True)
    locked = DiagnosisSession.objects.select_for_update().filter(session_id__in=ids).order_by("id")
    return {session.session_id: session for session in locked}


def _question(group: list[SpanRecord]) -> str | None:
    """The question from the agent span, else from the earliest model call."""
    ordered = sorted(group, key=lambda r: (r.role != "agent", not r.is_root, r.started_at))
    for record in ordered:
        if record.role in ("agent", "model"):
            text = question_of(record.attributes)
            if text:
                return text
    return None


def _answer(session: DiagnosisSession, root: SpanRecord | Span) -> str | None:
    """The answer from the root span, else from the trace's last model call (stored or new)."""
    text = answer_of(root.attributes)
    if text:
        return text
    # The new spans are written by now: the trace's spans are all in the table.
    spans = (
        Span.objects.filter(
            session_id=session.session_id, trace_id=root.trace_id, role__in=("agent", "model")
        )
        .exclude(span_id=root.span_id)
        .order_by("-ended_at")
        .only("attributes")
    )
    for span in spans:
        text = answer_of(span.attributes)
        if text:
            return text
    return None


def _session_update(
    session: DiagnosisSession,
    group: list[SpanRecord],
    *,
    root: SpanRecord | Span | None,
    rescore: bool,
) -> None:
    changed = []
    if not session.query:
        question = _question(group)
        if question:
            session.query = question
            changed.append("query")
    completed = False
    if root is not None and session.status == SessionStatus.RUNNING:
        session.status = SessionStatus.FAILED if root.is_error else SessionStatus.SUCCESS
        session.answer = _answer(session, root)
        session.finished_at = timezone.now()
        changed += ["status", "answer", "finished_at"]
        completed = True
    if changed:
        session.save(update_fields=[*changed, "updated_at"])
    if completed:
        metrics.session_completed(session.status)
    if session.status == SessionStatus.SUCCESS and (completed or rescore):
        enqueue_on_commit(SCORING_TASK, session.session_id, group=SCORING_GROUP)
