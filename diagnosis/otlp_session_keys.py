"""Which session each trace of a request goes to: one trace, one session, the one named by
the span nearest its root, whatever the exporter's batching.

A span names a session with a session attribute (`otlp_mapping.SESSION_ATTRIBUTES`). An
agent that delegates to another leaves one trace whose sub-agent spans name a session of
their own (pydantic-ai gives a nested run its own `gen_ai.conversation.id`), and a batch
span processor exports spans as they end, so those often arrive first, in an earlier
request. So a name is ranked by where its span stands: the root (no parent) first, then a
span whose parent is remote (the top of an agent's run behind a gateway), then any other.
The best-ranked name of the trace wins, among the request's spans and those stored (a
stored span names the session it is in, unless that is the trace-id placeholder); at the
same rank, the session the trace's spans already went to, else the first name seen. A
placeholder a reader has rated (its root completed it) names the session too: it cannot
move, the reader's rating being of it, so the rest of its trace joins it rather than
start a session that no root would ever complete.

Once a root (or a remote-parented top) has named the trace's session, what the trace
stored elsewhere meanwhile moves there (diagnosis.otlp_placeholders): the trace-id
placeholder as always, and a session named provisionally by a span below the root.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Case, IntegerField, Value, When

from diagnosis.models import SESSION_ID_PATTERN, DiagnosisSession, Span
from diagnosis.otlp_mapping import REMOTE_PARENT_ATTRIBUTE, SpanRecord

# Where a span naming a session stands in its trace, the nearest the root first.
ROOT, REMOTE_TOP, BELOW = 0, 1, 2

# A stored span's rank and the session it is in, by trace.
Stored = dict[str, set[tuple[int, str]]]


@dataclass(frozen=True)
class TraceSessions:
    sessions: dict[str, str]  # each trace's session id
    rooted: frozenset[str]  # traces whose session a root named: the rest of them moves there
    provisional: frozenset[str]  # named sessions holding spans of rooted traces, moving away


def trace_sessions(
    records: list[SpanRecord], notes: dict[tuple[str, str], list[str]]
) -> TraceSessions:
    """Each trace's session (see the module's docstring), else the trace id. A session id
    no session can have is ignored and noted: the span is read as one without it (a root
    still completes its session, under the trace id), not rejected."""
    named: dict[str, list[tuple[int, str]]] = defaultdict(list)
    ignored = []
    for record in records:
        hint = record.session_hint
        if (hint and not SESSION_ID_PATTERN.match(hint)) or record.session_hint_unusable:
            ignored.append(record)
        if hint and SESSION_ID_PATTERN.match(hint):
            named[record.trace_id].append((_rank(record), hint))
        else:
            named.setdefault(record.trace_id, [])
    stored = stored_ranks(named)
    # Only a placeholder another name contends with may decide anything by being rated.
    rated = placeholders_rated(
        {t: held for t, held in stored.items() if named[t] or len({s for _, s in held}) > 1}
    )
    sessions, rooted, provisional = {}, set(), set()
    for trace, hints in named.items():
        session_id, by_root = decided(trace, hints, stored.get(trace, set()), rated=trace in rated)
        sessions[trace] = session_id
        if by_root:
            rooted.add(trace)
            provisional |= {s for _, s in stored.get(trace, ()) if s not in (trace, session_id)}
    for record in ignored:
        if record.session_hint_unusable:
            shown = record.session_hint_unusable
            why = "应为 1-64 个 A-Za-z0-9._:- 字符的字符串"
        else:
            shown = repr((record.session_hint or "")[:80])
            why = "须为 1-64 个 A-Za-z0-9._:- 字符，且不能是 . 或 .."
        notes[record.trace_id, record.span_id].append(
            f"span {record.span_id}：会话 ID {shown} 无效（{why}），"
            f"已忽略；trace {record.trace_id} 的 span 归入会话 {sessions[record.trace_id]}"
        )
    return TraceSessions(sessions, frozenset(rooted), frozenset(provisional))


def decided(
    trace: str,
    hints: list[tuple[int, str]],
    stored: Iterable[tuple[int, str]],
    *,
    rated: bool = False,
) -> tuple[str, bool]:
    """The session of `trace`, and whether a root (or a remote-parented top) named it,
    the only session so named: the best-ranked of the names sent now (`hints`, in the
    order seen) and of the named sessions its stored spans are in, its placeholder among
    them when `rated` (a reader rated it); at the same rank the stored (where the trace's
    spans already went) before the sent. The trace id when none names one."""
    candidates = [
        (rank, 0, session) for rank, session in sorted(stored) if session != trace or rated
    ]
    candidates += [(rank, 1, session) for rank, session in hints]
    if not candidates:
        return trace, False
    # min() keeps the first of equals: the stored in their order, then the first sent.
    rank, _, session = min(candidates, key=lambda c: c[:2])
    # Two roots naming two sessions (spans of the trace in both already) say nothing of
    # which is the trace's: the trace is not moved on their word.
    alone = len({s for r, _, s in candidates if r == rank}) == 1
    return session, rank < BELOW and alone


def stored_ranks(traces: Iterable[str]) -> Stored:
    """The sessions the stored spans of `traces` are in, each with the best rank of a
    span of the trace in it (one query, a few rows per trace)."""
    traces = list(traces)
    if not traces:
        return {}
    rank = Case(
        When(parent_span_id="", then=Value(ROOT)),
        When(**{"attributes__has_key": REMOTE_PARENT_ATTRIBUTE}, then=Value(REMOTE_TOP)),
        default=Value(BELOW),
        output_field=IntegerField(),
    )
    rows = (
        Span.objects.filter(trace_id__in=traces)
        .annotate(rank=rank)
        .values_list("trace_id", "rank", "session_id")
        .distinct()
    )
    stored: Stored = defaultdict(set)
    for trace, found, session_id in rows:
        stored[trace].add((found, session_id))
    return stored


def placeholders_rated(stored: Stored) -> frozenset[str]:
    """The traces among `stored` whose placeholder (the session named by the trace id)
    holds spans of them and has been rated; a query only when there is a placeholder."""
    held = [trace for trace, ranked in stored.items() if any(s == trace for _, s in ranked)]
    if not held:
        return frozenset()
    rated = DiagnosisSession.objects.filter(session_id__in=held, feedback__isnull=False)
    return frozenset(rated.values_list("session_id", flat=True))


def _rank(record: SpanRecord) -> int:
    if record.is_root:
        return ROOT
    return REMOTE_TOP if record.parent_is_remote else BELOW
