"""django-q2 tasks. Thin: they take ids, call a service, and are safe to run twice.

Other apps reach them by dotted name (`enqueue_on_commit("evaluation.tasks.session_score",
...)`), never by import: this app stands above them.
"""

import logging

from django.conf import settings

from config import metrics
from config.logging import bind_session_id
from evaluation.selectors import session_statuses
from evaluation.services import (
    heartbeat_record,
    session_evaluate,
    session_opinion_form,
    sessions_evaluate,
    sessions_opinion_form,
    sessions_score_overdue,
)

logger = logging.getLogger(__name__)

SCORING_TASK = "evaluation.tasks.session_score"
SCORING_GROUP = "scoring"


def session_score(session_id: str) -> int | None:
    """Score one session; raises on any error so django-q2 records a Failure."""
    with bind_session_id(session_id):
        try:
            result = session_evaluate(session_id=session_id)
        except Exception:
            metrics.scoring_failed()
            logger.exception("scoring failed; the score stays empty until a retry succeeds")
            raise
    return None if result is None else result["evidence_score"]


def sessions_rescore(session_ids: list[str]) -> int:
    """Score the sessions again (the admin's rescore action); how many were scored."""
    return sessions_evaluate(sessions=session_statuses(session_ids=session_ids))


def session_opinion(session_id: str) -> str | None:
    """Form the session's opinion; raises on any error so django-q2 records a Failure."""
    with bind_session_id(session_id):
        try:
            opinion = session_opinion_form(session_id=session_id)
        except Exception as exc:
            # The message only: the provider's errors name the status, never the key.
            logger.error("opinion not formed: %s", str(exc)[:300])
            raise
    return None if opinion is None else opinion["source"]


def sessions_opinion(session_ids: list[str]) -> int:
    """Form the opinions the scored sessions lack; how many were written."""
    written, _failed = sessions_opinion_form(session_ids=session_ids, only_missing=True)
    return written


def scoring_sweep() -> int:
    """Scheduled every minute: score what a lost task left unscored."""
    return sessions_score_overdue(
        older_than_seconds=settings.SCORING_SWEEP_AFTER,
        window_hours=settings.SCORING_SWEEP_WINDOW_HOURS,
        limit=SWEEP_BATCH,
    )


SWEEP_BATCH = 2_000


def worker_heartbeat() -> None:
    """Scheduled every minute: proves to /readyz that a worker is taking tasks."""
    heartbeat_record()
