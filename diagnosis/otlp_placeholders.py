"""Spans stored under their trace id until a span naming their session arrived (an
exporter sent them first), and what moves with them to that session.

A trace's spans go to the session its spans name; spans that came before any of them
did were stored under the trace id, in a placeholder session. Once the name arrives,
everything the placeholder holds moves to the named session (spans, tool facts, the case
searches an agent made naming the trace id), with the completion when the root was among
them, and the placeholder's creation when it is the earlier: the session began when its
first span was stored. The placeholder goes once it is empty. One a reader has rated
stays: it is then the trace's session, and the rest of the trace joins it
(diagnosis.otlp_session_keys).

A trace whose root names its session (diagnosis.otlp_session_keys) may also have left
spans in a session a span below the root named (a sub-agent's own conversation id), when
they came first: they move to the root's session too, with their tool facts. Such a
provisional session that held this trace alone (running, no other trace's spans) moves
whole, as a placeholder does, and goes; one holding other traces keeps them, and is
scored again when tool facts left it (diagnosis.otlp_rescore).

Two requests of one trace at once can each miss what the other has not committed yet:
one stores spans under the trace id while the other, naming the session, looks for a
placeholder and finds none. Each request therefore looks again once it has committed
(`placeholders_joined`): the later of the two sees both, and moves the placeholder then.
"""

from collections.abc import Collection, Iterable

from diagnosis.models import DiagnosisSession, SessionStatus, Span, ToolInvocation
from diagnosis.otlp_mapping import ANSWERED_BY_TRACE_ATTRIBUTE
from diagnosis.otlp_rescore import scored_again
from diagnosis.otlp_session_keys import decided, placeholders_rated, stored_ranks


def placeholders_adopted(
    *,
    sessions_by_trace: dict[str, str],
    sessions: dict[str, DiagnosisSession],
    rooted: Collection[str] = (),
) -> set[str]:
    """The placeholders of these traces' sessions moved to them (see the module's
    docstring), and, for the traces in `rooted` (whose root named their session), the
    sessions a span below the root named provisionally; a session the reader has rated
    keeps what it holds. Returns the sessions that gained facts or their completion."""
    stored = (
        Span.objects.filter(trace_id__in=list(sessions_by_trace))
        .values_list("trace_id", "session_id")
        .distinct()
    )
    # A trace's placeholder is the session named by its trace id.
    moves = sorted(
        (held_by, trace)
        for trace, held_by in stored
        if held_by != sessions_by_trace[trace] and (held_by == trace or trace in rooted)
    )
    if not moves:
        return set()
    # Locked in one statement, in the order of their key (one by one, two requests moving
    # each other's placeholders deadlocked); one moved by a request that committed
    # meanwhile is not found.
    holders = {
        holder.session_id: holder
        for holder in DiagnosisSession.objects.select_for_update()
        .filter(session_id__in={held_by for held_by, _ in moves})
        .order_by("id")
    }
    adopted, losing = set(), set()
    for held_by, trace in moves:
        holder = holders.get(held_by)
        if holder is None or holder.feedback is not None:
            continue  # moved meanwhile, or rated
        session_id = sessions_by_trace[trace]
        if held_by == trace or _only_trace_in(holder, trace):
            moved = _rows_moved(held_by, session_id)
            _creation_adopted(holder, sessions[session_id])
            if _completion_adopted(holder, sessions[session_id]) or moved:
                adopted.add(session_id)
        else:
            facts, spans = _trace_rows_moved(held_by, session_id, trace)
            if facts or spans:
                adopted.add(session_id)
            if facts:
                losing.add(held_by)
        if not _holds_anything(held_by):
            holder.delete()
            del holders[held_by]
    # A session that gave up facts and stays (it holds other traces) is scored again too:
    # its score and opinion counted them.
    scored_again(holders[held_by] for held_by in losing if held_by in holders)
    return adopted


def placeholders_joined(traces: Iterable[str]) -> set[str]:
    """The sessions of `traces` joined, when more than one holds spans of a trace (two
    requests of the trace committed at once; see the module's docstring): into the
    session its root named (diagnosis.otlp_session_keys), else a placeholder into the one
    named session the trace's other spans went to; in a transaction of its own, after the
    request's. A trace whose spans went to more than one named session, none named by its
    root, is left as it is. Returns the sessions that gained facts or their completion."""
    stored = stored_ranks(traces)
    split = {trace: ranked for trace, ranked in stored.items() if len({s for _, s in ranked}) > 1}
    rated = placeholders_rated(split)
    named, rooted, holders = {}, set(), set()
    for trace, ranked in split.items():
        held = {session_id for _, session_id in ranked}
        session_id, by_root = decided(trace, [], ranked, rated=trace in rated)
        if by_root:
            rooted.add(trace)
        elif not (trace in held and len(held - {trace}) == 1):
            continue
        named[trace] = session_id
        holders |= held
    if not named:
        return set()
    # The sessions and what moves to them locked together, in the order of their key, as
    # diagnosis.otlp_services locks a request's (placeholders_adopted finds them locked).
    locked = DiagnosisSession.objects.select_for_update().filter(session_id__in=holders)
    sessions = {session.session_id: session for session in locked.order_by("id")}
    # A session gone since it was read was moved by a request that committed meanwhile.
    named = {trace: session_id for trace, session_id in named.items() if session_id in sessions}
    return placeholders_adopted(sessions_by_trace=named, sessions=sessions, rooted=rooted)


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


def _only_trace_in(holder: DiagnosisSession, trace: str) -> bool:
    """Whether `holder`, a session a span below the root named, is this trace's alone:
    running, and no other trace's spans in it. It then moves whole, as a placeholder does
    (what an agent recorded naming it too), and goes; else only the trace's rows move."""
    if holder.status != SessionStatus.RUNNING:
        return False
    return not Span.objects.filter(session_id=holder.session_id).exclude(trace_id=trace).exists()


def _trace_rows_moved(held_by: str, session_id: str, trace: str) -> tuple[int, int]:
    """The spans of `trace` in `held_by` and the tool facts they made (a fact's id is its
    span's) moved to the session: how many facts, and how many spans."""
    spans = Span.objects.filter(session_id=held_by, trace_id=trace)
    span_ids = list(spans.values_list("span_id", flat=True))
    facts = ToolInvocation.objects.filter(session_id=held_by, invocation_id__in=span_ids)
    return facts.update(session_id=session_id), spans.update(session_id=session_id)


def _holds_anything(session_id: str) -> bool:
    return any(
        relation.related_model._base_manager.filter(**{relation.field.attname: session_id}).exists()
        for relation in _session_rows()
    )


def _creation_adopted(placeholder: DiagnosisSession, session: DiagnosisSession) -> None:
    """The earlier creation of the two: a session created now for a trace whose first
    spans came an hour ago began an hour ago (the scoring sweep and retention go by it); a
    session started over REST before any span keeps its own."""
    if placeholder.created_at < session.created_at:
        session.created_at = placeholder.created_at
        session.save(update_fields=["created_at", "updated_at"])


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
    # The root that completed the placeholder without an answer of its own now answers for
    # the session (diagnosis.otlp_completion); it moved with the placeholder's spans.
    for root in Span.objects.filter(
        session_id=session.session_id,
        trace_id=placeholder.session_id,
        attributes__has_key=ANSWERED_BY_TRACE_ATTRIBUTE,
    ):
        if root.attributes[ANSWERED_BY_TRACE_ATTRIBUTE] == placeholder.session_id:
            root.attributes[ANSWERED_BY_TRACE_ATTRIBUTE] = session.session_id
            root.save(update_fields=["attributes"])
    return True
