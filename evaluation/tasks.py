"""django-q2 tasks. Thin: they take ids, call a service, and are safe to run twice."""

import logging

from config.logging import bind_session_id
from config.queue import enqueue_on_commit
from evaluation.services import heartbeat_record, session_evaluate

logger = logging.getLogger(__name__)

SCORING_TASK = "evaluation.tasks.session_score"
SCORING_GROUP = "scoring"


def session_score(session_id: str) -> int | None:
    """Score one session; raises on any error so django-q2 records a Failure."""
    with bind_session_id(session_id):
        try:
            result = session_evaluate(session_id=session_id)
        except Exception:
            logger.exception("scoring failed; the score stays empty until a retry succeeds")
            raise
    return None if result is None else result["evidence_score"]


def scoring_enqueue(*, session_id: str) -> None:
    """Score the session after the current transaction commits."""
    enqueue_on_commit(SCORING_TASK, session_id, group=SCORING_GROUP)


def worker_heartbeat() -> None:
    """Scheduled every minute: proves to /readyz that a worker is taking tasks."""
    heartbeat_record()
