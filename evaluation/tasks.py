"""django-q2 tasks. Thin: they take ids, call a service, and are safe to run twice."""

from config.queue import enqueue_on_commit
from evaluation.services import session_evaluate

SCORING_TASK = "evaluation.tasks.session_score"
SCORING_GROUP = "scoring"


def session_score(session_id: str) -> int | None:
    """Score one session; raises on any error so django-q2 records a Failure."""
    result = session_evaluate(session_id=session_id)
    return None if result is None else result["evidence_score"]


def scoring_enqueue(*, session_id: str) -> None:
    """Score the session after the current transaction commits."""
    enqueue_on_commit(SCORING_TASK, session_id, group=SCORING_GROUP)
