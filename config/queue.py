"""Putting work on the django-q2 queue, only ever after the current transaction commits."""

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django_q.conf import Conf
from django_q.tasks import async_task

from config import metrics

logger = logging.getLogger(__name__)


def enqueue_on_commit(
    task: str,
    *args: Any,
    robust: bool = False,
    when: Callable[[], bool] | None = None,
    **kwargs: Any,
) -> None:
    """Enqueue `task` once the surrounding transaction commits; never if it rolls back.

    Enqueued inside a transaction, a worker could look for a row that is not committed
    yet, or do work for a request that was rolled back. Outside a transaction (a task
    that queues its next run) this enqueues at once. `when`, if given, is asked at the
    commit, not before: the task is enqueued only if it answers true.

    A broker that cannot take the task (Redis down, the ORM broker's database gone) fails
    nothing: the work is committed by then, so the request answers what it did. The
    failure is logged, with the task (and the session it was for), and counted in
    `diagnosis_enqueue_failures_total`; the scoring sweep (evaluation.tasks.scoring_sweep)
    scores a SUCCESS session whose task was never queued, and the minute's schedule
    starts the case indexer. `robust` decides whether a failure of `when`, or with Q_SYNC
    (the task run inline) of the task itself, is logged instead of raised.
    """

    def enqueue() -> None:
        if when is not None and not when():
            return
        try:
            async_task(task, *args, **kwargs)
        except Exception as exc:
            if kwargs.get("sync", Conf.SYNC):
                raise  # the task itself failed, run inline: `robust` decides
            _enqueue_failed(task, args, exc)

    # A function, not a partial: Django names the callback by its __qualname__ when a
    # robust one fails.
    enqueue.__qualname__ = f"enqueue({task})"
    transaction.on_commit(enqueue, robust=robust)


def _enqueue_failed(task: str, args: tuple, exc: Exception) -> None:
    # Tasks take ids: a session id, a list of them, or none (the case indexer).
    subject = args[0] if args else None
    extra: dict[str, object] = {"task": task}
    if isinstance(subject, str):
        extra["session_id"] = subject
    elif isinstance(subject, list | tuple):
        extra["sessions"] = len(subject)
    # The exception's class and first line: a broker's message names its host and port,
    # never the URL's password.
    reason = str(exc).splitlines()[0][:200] if str(exc) else ""
    logger.error(
        "task not enqueued after its commit: %s: %s",
        exc.__class__.__name__,
        reason,
        extra=extra,
    )
    metrics.enqueue_failed()
