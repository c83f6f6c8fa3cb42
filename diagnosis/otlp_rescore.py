"""Scoring an OTLP session again once what its score and opinion were formed from changed.

A session is scored when its root completes it. Exporters batch and may split a trace,
so what the score and the opinion (`self_evaluation.llm_opinion`) read may change after:
tool facts arrive late, move to another session (a root naming another session than the
one a sub-agent named first), or a call that ended later becomes the answer. The session
is then scored again, after the commit, as on its completion; and its opinion, formed
from the question, the answer and the tool facts as they were, is taken away in the same
transaction, so that the scoring task forms it again from what the session holds now
(the scoring task forms the opinions that scored sessions lack). The rule part stays until
the task replaces it.
"""

from collections.abc import Iterable

from django.db import connection

from config.queue import enqueue_on_commit
from diagnosis.models import DiagnosisSession, SessionStatus
from diagnosis.services import SCORING_GROUP, SCORING_TASK

# The opinion's key in self_evaluation (the contract's name; evaluation writes it).
_OPINION_PATH = "'$.llm_opinion'"
_OPINION_DROPPED = (
    "UPDATE {table} SET self_evaluation = JSON_REMOVE(self_evaluation, {path}) "
    "WHERE session_id IN ({placeholders}) AND JSON_EXTRACT(self_evaluation, {path}) IS NOT NULL"
)


def scored_again(sessions: Iterable[DiagnosisSession]) -> None:
    """The SUCCESS sessions among `sessions` (locked by the caller) scored again after the
    commit, their opinion formed again (see the module's docstring)."""
    session_ids = sorted(
        {session.session_id for session in sessions if session.status == SessionStatus.SUCCESS}
    )
    if not session_ids:
        return
    sql = _OPINION_DROPPED.format(
        table=connection.ops.quote_name(DiagnosisSession._meta.db_table),
        path=_OPINION_PATH,
        placeholders=", ".join(["%s"] * len(session_ids)),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, session_ids)
    for session_id in session_ids:
        enqueue_on_commit(SCORING_TASK, session_id, group=SCORING_GROUP)


def scored_on_completion(session: DiagnosisSession) -> None:
    """A session just completed (SUCCESS) scored after the commit: nothing was formed of
    it yet."""
    if session.status == SessionStatus.SUCCESS:
        enqueue_on_commit(SCORING_TASK, session.session_id, group=SCORING_GROUP)
