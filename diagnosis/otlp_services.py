"""Writes for OTLP trace ingest: spans, their sessions and tool-invocation facts.

One request is one transaction: every span it accepts is stored with its session and
facts, or nothing is. A span already stored (an exporter's retry; the key is trace id +
span id) is skipped. Sessions follow their root span: SUCCESS when it ends OK or UNSET,
FAILED when it ends in ERROR; scoring is enqueued after the commit as for REST sessions,
and again when facts arrive for a session already scored (exporters may split a trace).
"""

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

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
from diagnosis.otlp_mapping import SpanRecord, tool_facts_body
from diagnosis.otlp_messages import answer_of, question_of
from diagnosis.serializers import tool_invocation_checked
from diagnosis.services import SCORING_GROUP, SCORING_TASK, InvocationFacts

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestResult:
    accepted: int
    duplicates: int
    rejected: list[str]


def traces_ingest(*, records: list[SpanRecord], rejected: Iterable[str] = ()) -> IngestResult:
    """Store the spans of one request (already redacted and trimmed), all or nothing."""
    rejected = list(rejected)
    records = _unique(records)
    if not records:
        return IngestResult(0, 0, rejected)
    sessions_by_trace = _sessions_by_trace(records, rejected)
    records = [r for r in records if r.trace_id in sessions_by_trace]
    with transaction.atomic():
        catalog, unseen = _catalog(records)
        kept, facts = _checked_facts(records, catalog, rejected)
        stored = _stored_span_keys(kept)
        new = [r for r in kept if (r.trace_id, r.span_id) not in stored]
        new = _with_free_invocation_ids(new, sessions_by_trace, facts, rejected)
        # The catalog gains the tools of the spans stored, in the same transaction: a span
        # refused, or a request that fails, leaves nothing behind, not even a tool's name.
        _catalog_add(unseen, {r.tool_name for r in new if r.tool_name})
        if new:
            _write(new, sessions_by_trace, facts)
    duplicates = len(kept) - len([r for r in kept if (r.trace_id, r.span_id) not in stored])
    metrics.otlp_spans(accepted=len(new), duplicates=duplicates, rejected=len(rejected))
    logger.info(
        "spans received",
        extra={"stored": len(new), "duplicates": duplicates, "rejected": len(rejected)},
    )
    return IngestResult(len(new), duplicates, rejected)


def _checked_facts(
    records: list[SpanRecord], catalog: dict[str, ToolCatalogEntry], rejected: list[str]
) -> tuple[list[SpanRecord], dict[tuple[str, str], InvocationFacts]]:
    """The spans kept, and the tool facts of the tool spans (by trace and span id), each
    checked by the REST API's validator; a tool span it refuses is rejected, with its
    reasons."""
    facts: dict[tuple[str, str], InvocationFacts] = {}
    kept = []
    for record in records:
        if record.role == "tool" and record.tool_name:
            body = tool_facts_body(record, catalog.get(record.tool_name))
            try:
                facts[record.trace_id, record.span_id] = tool_invocation_checked(body)
            except serializers.ValidationError as exc:
                problems = "; ".join(
                    f"{name}: {' '.join(messages)}"
                    for name, messages in flatten_errors(exc.detail).items()
                )
                rejected.append(f"工具 span {record.span_id}：{problems}")
                continue
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


def _sessions_by_trace(records: list[SpanRecord], rejected: list[str]) -> dict[str, str]:
    """Each trace's session id: a session attribute on any of its spans in this request,
    else the session its spans already stored went to, else the trace id."""
    hints: dict[str, str | None] = {}
    for record in records:
        if record.session_hint and not hints.get(record.trace_id):
            hints[record.trace_id] = record.session_hint
        else:
            hints.setdefault(record.trace_id, None)
    unhinted = [trace for trace, hint in hints.items() if hint is None]
    known = dict(
        Span.objects.filter(trace_id__in=unhinted).values_list("trace_id", "session_id").distinct()
        if unhinted
        else []
    )
    sessions = {}
    for trace, hint in hints.items():
        session_id = hint or known.get(trace) or trace
        if SESSION_ID_PATTERN.match(session_id):
            sessions[trace] = session_id
        else:
            count = sum(1 for r in records if r.trace_id == trace)
            rejected.extend(
                [f"trace {trace}：会话 ID {session_id[:80]!r} 必须是 1-64 个 A-Za-z0-9._:- 字符"]
                * count
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
    adopted = _placeholders_adopted(
        {r.trace_id: sessions_by_trace[r.trace_id] for r in records}, sessions
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
    for session_id, group in by_session.items():
        _session_update(sessions[session_id], group, rescore=session_id in with_new_facts)


def _placeholders_adopted(
    sessions_by_trace: dict[str, str], sessions: dict[str, DiagnosisSession]
) -> set[str]:
    """Spans of a trace stored before its session was known (under the trace id: an
    exporter sent spans before the one that names the session) move to the session, with
    all else the placeholder holds, and with the completion when the root was among them;
    the placeholder session goes once it is empty. A placeholder the reader has rated
    keeps what it holds. Returns the sessions that gained facts or their completion this
    way."""
    stored = (
        Span.objects.filter(trace_id__in=list(sessions_by_trace))
        .values_list("trace_id", "session_id")
        .distinct()
    )
    adopted = set()
    for trace, placeholder_id in stored:
        session_id = sessions_by_trace[trace]
        if placeholder_id == session_id or placeholder_id != trace:
            continue
        placeholder = DiagnosisSession.objects.select_for_update().get(session_id=placeholder_id)
        if placeholder.feedback is not None:
            continue
        moved = _rows_moved(placeholder_id, session_id)
        if _completion_adopted(placeholder, sessions[session_id]) or moved:
            adopted.add(session_id)
        if not _holds_anything(placeholder_id):
            placeholder.delete()
    return adopted


def _session_rows() -> list:
    """The relations by which rows of every app belong to a session (spans, tool facts,
    the case searches an agent made, ...), read from the model: this app need not know
    the others'. One-to-one rows (a review, a case) are the session's own, not moved."""
    return [
        relation
        for relation in DiagnosisSession._meta.related_objects
        if relation.one_to_many or relation.one_to_one
    ]


def _rows_moved(placeholder_id: str, session_id: str) -> int:
    """Everything the placeholder holds but its one-to-one rows moves to the session: its
    spans and facts, and what an agent recorded naming the trace id before the session
    had a name (a case search, and the tool fact that scores it)."""
    moved = 0
    for relation in _session_rows():
        if relation.one_to_many:
            rows = relation.related_model._base_manager.filter(
                **{relation.field.attname: placeholder_id}
            )
            moved += rows.update(**{relation.field.attname: session_id})
    return moved


def _holds_anything(session_id: str) -> bool:
    return any(
        relation.related_model._base_manager.filter(**{relation.field.attname: session_id}).exists()
        for relation in _session_rows()
    )


def _completion_adopted(placeholder: DiagnosisSession, session: DiagnosisSession) -> bool:
    """The placeholder's completion, question and answer become the session's when the
    placeholder held the root (it is completed) and the session is not completed yet."""
    if placeholder.status == SessionStatus.RUNNING or session.status != SessionStatus.RUNNING:
        return False
    session.status = placeholder.status
    session.answer = placeholder.answer
    session.finished_at = placeholder.finished_at
    changed = ["status", "answer", "finished_at"]
    if not session.query and placeholder.query:
        session.query = placeholder.query
        changed.append("query")
    if not session.user_id and placeholder.user_id:
        session.user_id = placeholder.user_id
        changed.append("user_id")
    session.save(update_fields=[*changed, "updated_at"])
    return True


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


def _answer(session: DiagnosisSession, root: SpanRecord) -> str | None:
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


def _session_update(session: DiagnosisSession, group: list[SpanRecord], *, rescore: bool) -> None:
    changed = []
    if not session.query:
        question = _question(group)
        if question:
            session.query = question
            changed.append("query")
    root = next((r for r in group if r.is_root), None)
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
