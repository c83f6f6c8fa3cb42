"""When an OTLP trace completes its session: its root found, the session's status, answer
and finish written.

A request completes the session of a trace whose root it finds: a span of its own with no
parent, or the local top of the agent's run once the agent's spans are below a span whose
parent is remote (`otlp_mapping.root_span_id`). The answer is the root's output, else the
trace's last model or agent call's; such a root is marked (ANSWERED_BY_TRACE_ATTRIBUTE),
and a call of its trace that arrives later and ends later gives the session its answer,
until a reader has rated it. Nothing else changes a completed session: neither a
completion over REST nor another trace (a later run of the conversation).

Two requests of one trace at once can each miss what the other has not committed yet: a
gateway's server span in one and the agent span below it in the other, and neither finds
the root; or one finds the root while the answer is in the other's span. Each request
whose session it left running, or whose answer its calls may change, therefore looks again
once it has committed (`completions_settled`): the later of the two sees every span of
the trace.
"""

from collections import defaultdict
from collections.abc import Collection, Iterable

from django.db import transaction
from django.utils import timezone

from config import metrics
from diagnosis.models import DiagnosisSession, SessionStatus, Span, SpanRole
from diagnosis.otlp_mapping import (
    ANSWERED_BY_TRACE_ATTRIBUTE,
    REMOTE_PARENT_ATTRIBUTE,
    KnownSpan,
    SpanRecord,
    root_span_id,
)
from diagnosis.otlp_messages import answer_of
from diagnosis.otlp_rescore import scored_again, scored_on_completion

Root = SpanRecord | Span


def roots_found(records: list[SpanRecord]) -> dict[str, Root]:
    """The root of each trace of `records` that this request found: one of its spans, or
    a span stored earlier that the agent's run (in this request) now lies below. The new
    spans are written by now, so the table holds every span known for these traces. A
    trace whose span with no parent was stored earlier has no root here: that span
    completed its session then, and a span with a remote parent does not displace it."""
    roots: dict[str, Root] = {}
    for record in records:
        if record.is_root and record.trace_id not in roots:
            roots[record.trace_id] = record
    others = {r.trace_id for r in records} - set(roots)
    if not others:
        return roots
    new = {(r.trace_id, r.span_id): r for r in records}
    known = _known_spans(others)
    for trace in others:
        root_id = root_span_id(known[trace])
        if (trace, root_id) in new:
            roots[trace] = new[trace, root_id]
        elif root_id is not None and any(
            s.span_id == root_id and s.parent_is_remote for s in known[trace]
        ):
            roots[trace] = Span.objects.get(trace_id=trace, span_id=root_id)
    return roots


def completion_set(session: DiagnosisSession, root: Root) -> list[str]:
    """`session`, running, completed by `root` (not saved yet; the fields set are
    returned): SUCCESS, or FAILED when the root ended in ERROR; its answer read from the
    trace. A root (stored by now) without an answer of its own is marked so."""
    session.status = SessionStatus.FAILED if root.is_error else SessionStatus.SUCCESS
    session.answer = _answer(session.session_id, root)
    session.finished_at = timezone.now()
    if not answer_of(root.attributes):
        root.attributes = {**root.attributes, ANSWERED_BY_TRACE_ATTRIBUTE: session.session_id}
        Span.objects.filter(trace_id=root.trace_id, span_id=root.span_id).update(
            attributes=root.attributes
        )
    counted = session.status
    transaction.on_commit(lambda: metrics.session_completed(counted))
    return ["status", "answer", "finished_at"]


def unsettled(session: DiagnosisSession, stored: list[SpanRecord], root: Root | None) -> bool:
    """Whether a request that stored `stored` in `session` looks again once committed: the
    session is still running, or these spans hold a call that may be its answer (see the
    module's docstring; `root`, this request's root of them, has none of its own)."""
    if session.status == SessionStatus.RUNNING:
        return True
    if session.feedback is not None or (root is not None and answer_of(root.attributes)):
        return False
    if root is not None:
        # Completed now by a root without an answer: the trace's last call is the answer,
        # and a request committing at the same time may hold it.
        return True
    return any(
        record.result and record.role in (SpanRole.AGENT, SpanRole.MODEL) for record in stored
    )


def completions_settled(traces: Collection[str]) -> set[str]:
    """Once committed: the sessions of `traces` whose root is now among the committed spans
    completed if still running, and given their trace's last call's answer if it is
    theirs to take (see the module's docstring). Returns the sessions completed or
    answered this way."""
    if not traces:
        return set()
    known = _known_spans(traces)
    roots = {}
    for trace, spans in known.items():
        root_id = root_span_id(spans)
        if root_id is not None:
            roots[trace] = root_id
    if not roots:
        return set()
    stored = {
        (span.trace_id, span.span_id): span
        for span in Span.objects.filter(trace_id__in=list(roots), span_id__in=roots.values())
    }
    root_spans = [stored[key] for key in roots.items() if key in stored]
    locked = DiagnosisSession.objects.select_for_update().filter(
        session_id__in={span.session_id for span in root_spans}
    )
    sessions = {session.session_id: session for session in locked.order_by("id")}
    settled = set()
    for root in root_spans:
        session = sessions.get(root.session_id)
        if session is None:
            # A placeholder another request moved (and settled) since the root was read.
            continue
        if session.status == SessionStatus.RUNNING:
            session.save(update_fields=[*completion_set(session, root), "updated_at"])
            scored_on_completion(session)
        elif _answered_by(session, root) and (answer := _answer(session.session_id, root)):
            if answer == session.answer:
                continue
            session.answer = answer
            session.save(update_fields=["answer", "updated_at"])
            # A new answer: the opinion read the one before (diagnosis.otlp_rescore).
            scored_again([session])
        else:
            continue
        settled.add(session.session_id)
    return settled


def _answered_by(session: DiagnosisSession, root: Span) -> bool:
    """Whether `session`'s answer is `root`'s trace's last call's, still open to a later
    call: the root completed it (not another session it was stored in before) without an
    answer of its own, and no reader has rated it."""
    completed = root.attributes.get(ANSWERED_BY_TRACE_ATTRIBUTE) == session.session_id
    return completed and session.feedback is None


def _known_spans(traces: Iterable[str]) -> dict[str, list[KnownSpan]]:
    """What the roots of `traces` are found by, from every span of them stored."""
    spans = Span.objects.filter(trace_id__in=list(traces))
    remote = set(
        spans.filter(attributes__has_key=REMOTE_PARENT_ATTRIBUTE).values_list("trace_id", "span_id")
    )
    known: dict[str, list[KnownSpan]] = defaultdict(list)
    for trace, span_id, parent, role, started in spans.values_list(
        "trace_id", "span_id", "parent_span_id", "role", "started_at"
    ):
        known[trace].append(KnownSpan(span_id, parent, role, (trace, span_id) in remote, started))
    return known


def _answer(session_id: str, root: Root) -> str | None:
    """The answer from the root span, else from the trace's last model or agent call: the
    session's own spans first, then those a request committing at the same time stored
    under another session of the trace (its trace-id placeholder, or the named session)."""
    text = answer_of(root.attributes)
    if text:
        return text
    spans = (
        Span.objects.filter(trace_id=root.trace_id, role__in=("agent", "model"))
        .exclude(span_id=root.span_id)
        .only("attributes", "session_id", "ended_at")
    )
    ordered = sorted(spans, key=lambda s: (s.session_id != session_id, -s.ended_at.timestamp()))
    for span in ordered:
        text = answer_of(span.attributes)
        if text:
            return text
    return None
