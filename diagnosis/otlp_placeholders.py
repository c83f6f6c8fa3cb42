"""Spans stored under their trace id until a span naming their session arrived (an
exporter sent them first), and what moves with them to that session.

A trace's spans go to the session its spans name; spans that came before any of them
did were stored under the trace id, in a placeholder session. Once the name arrives,
everything the placeholder holds moves to the named session (spans, tool facts, the case
searches an agent made naming the trace id), with the completion when the root was among
them, and the placeholder's creation when it is the earlier: the session began when its
first span was stored. The placeholder goes once it is empty.

Two requests of one trace at once can each miss what the other has not committed yet:
one stores spans under the trace id while the other, naming the session, looks for a
placeholder and finds none. Each request therefore looks again once it has committed
(`placeholders_joined`): the later of the two sees both, and moves the placeholder then.
"""

from collections.abc import Iterable

from diagnosis.models import DiagnosisSession, SessionStatus, Span
from diagnosis.otlp_mapping import ANSWERED_BY_TRACE_ATTRIBUTE


def placeholders_adopted(
    *, sessions_by_trace: dict[str, str], sessions: dict[str, DiagnosisSession]
) -> set[str]:
    """The placeholders of these traces' sessions moved to them (see the module's
    docstring); a placeholder the reader has rated keeps what it holds. Returns the
    sessions that gained facts or their completion this way."""
    stored = (
        Span.objects.filter(trace_id__in=list(sessions_by_trace))
        .values_list("trace_id", "session_id")
        .distinct()
    )
    # A trace's placeholder is the session named by its trace id.
    wanted = {
        trace: sessions_by_trace[trace]
        for trace, held_by in stored
        if held_by == trace and held_by != sessions_by_trace[trace]
    }
    if not wanted:
        return set()
    # Locked in one statement, in the order of their key (one by one, two requests moving
    # each other's placeholders deadlocked); one moved by a request that committed
    # meanwhile is not found.
    placeholders = (
        DiagnosisSession.objects.select_for_update().filter(session_id__in=wanted).order_by("id")
    )
    adopted = set()
    for placeholder in placeholders:
        if placeholder.feedback is not None:
            continue  # rated
        placeholder_id = placeholder.session_id
        session_id = wanted[placeholder_id]
        moved = _rows_moved(placeholder_id, session_id)
        _creation_adopted(placeholder, sessions[session_id])
        if _completion_adopted(placeholder, sessions[session_id]) or moved:
            adopted.add(session_id)
        if not _holds_anything(placeholder_id):
            placeholder.delete()
    return adopted


def placeholders_joined(traces: Iterable[str]) -> set[str]:
    """The placeholders of `traces` moved to the session their other spans went to, when
    both hold spans of the trace (two requests of the trace committed at once; see the
    module's docstring); in a transaction of its own, after the request's. A trace whose
    spans went to more than one named session is left as it is. Returns the sessions that
    gained facts or their completion."""
    held: dict[str, set[str]] = {}
    for trace, session_id in (
        Span.objects.filter(trace_id__in=list(traces))
        .values_list("trace_id", "session_id")
        .distinct()
    ):
        held.setdefault(trace, set()).add(session_id)
    named = {
        trace: next(iter(sessions - {trace}))
        for trace, sessions in held.items()
        if trace in sessions and len(sessions - {trace}) == 1
    }
    if not named:
        return set()
    # The sessions and their placeholders locked together, in the order of their key, as
    # diagnosis.otlp_services locks a request's (placeholders_adopted finds them locked).
    locked = DiagnosisSession.objects.select_for_update().filter(
        session_id__in=set(named.values()) | set(named)
    )
    sessions = {session.session_id: session for session in locked.order_by("id")}
    return placeholders_adopted(sessions_by_trace=named, sessions=sessions)


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
