"""django-q2 tasks. Thin: they take ids, call a service, and are safe to run twice."""

import logging

from django.conf import settings

from config import metrics
from config.logging import bind_session_id
from config.queue import enqueue_on_commit
from evaluation.services import (
    heartbeat_record,
    opinions_enabled,
    session_evaluate,
    session_opinion_form,
    sessions_score_overdue,
)

logger = logging.getLogger(__name__)

SCORING_TASK = "evaluation.tasks.session_score"
SCORING_GROUP = "scoring"
OPINION_TASK = "evaluation.tasks.session_opinion"
OPINION_GROUP = "opinion"


def session_score(session_id: str) -> int | None:
    """Score one session; raises on any error so django-q2 records a Failure."""
    with bind_session_id(session_id):
        try:
            result = session_evaluate(session_id=session_id)
        except Exception:
            metrics.scoring_failed()
            logger.exception("scoring failed; the score stays empty until a retry succeeds")
            raise
    if result is not None and opinions_enabled():
        # Its own task, after the score is committed: a slow or failing provider never
        # holds up or undoes the score.
        opinion_enqueue(session_id=session_id)
    return None if result is None else result["evidence_score"]


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


def opinion_enqueue(*, session_id: str) -> None:
    """Form the session's opinion after the current transaction commits.

    The task may run up to just under Q_RETRY: a remote provider's timeout and retries
    (OPINION_TIMEOUT, OPINION_MAX_RETRIES) can outlast the scoring's Q_TIMEOUT, and
    evaluation/checks.py makes sure they fit in this.
    """
    # robust: the score is written whatever happens to its opinion (a broker hiccup
    # here must not fail, and so redo, the scoring task).
    enqueue_on_commit(
        OPINION_TASK,
        session_id,
        group=OPINION_GROUP,
        timeout=opinion_task_timeout(),
        robust=True,
    )


def opinion_task_timeout() -> int:
    return max(settings.Q_CLUSTER["timeout"], settings.Q_CLUSTER["retry"] - 1)


def scoring_enqueue(*, session_id: str) -> None:
    """Score the session after the current transaction commits."""
    enqueue_on_commit(SCORING_TASK, session_id, group=SCORING_GROUP)


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
