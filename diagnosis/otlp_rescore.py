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

from config.queue import enqueue_on_commit
from diagnosis.models import DiagnosisSession, SessionStatus
from diagnosis.services import SCORING_GROUP, SCORING_TASK

# The opinion's key in self_evaluation (the contract's name; evaluation writes it).
_OPINION_KEY = "llm_opinion"


def scored_again(sessions: Iterable[DiagnosisSession]) -> None:
    """The SUCCESS sessions among `sessions` (locked by the caller) scored again after the
    commit, their opinion formed again (see the module's docstring)."""
    scored = {s.session_id: s for s in sessions if s.status == SessionStatus.SUCCESS}
    for session_id in sorted(scored):
        evaluation = scored[session_id].self_evaluation
        if isinstance(evaluation, dict) and _OPINION_KEY in evaluation:
            kept = {key: value for key, value in evaluation.items() if key != _OPINION_KEY}
            DiagnosisSession.objects.filter(session_id=session_id).update(self_evaluation=kept)
        enqueue_on_commit(SCORING_TASK, session_id, group=SCORING_GROUP)


def scored_on_completion(session: DiagnosisSession) -> None:
    """A session just completed (SUCCESS) scored after the commit: nothing was formed of
    it yet."""
    if session.status == SessionStatus.SUCCESS:
        enqueue_on_commit(SCORING_TASK, session.session_id, group=SCORING_GROUP)
