"""Putting work on the django-q2 queue, only ever after the current transaction commits."""

import logging
import sys
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django_q.brokers import Broker, get_broker
from django_q.conf import Conf
from django_q.tasks import async_task

from config import metrics
from config.failure_log import RepeatedFailures
from config.quiet_window import is_quiet, quiet_until

logger = logging.getLogger(__name__)

# A Redis broker that hangs holds each enqueue for its socket timeout (5 s by default, a
# ?socket_timeout= in Q_REDIS_URL wins), and so each completion and each useful feedback:
# with sync workers, under one a second a node. So once an enqueue of this process timed
# out, its enqueues for BROKER_QUIET_SECONDS fail at once without trying the broker,
# counted as failures but logged in the next line only; then one tries it again
# (config/quiet_window.py). Only a Redis timeout opens the window: a refused connection
# fails at once already, and the ORM broker's failure is the database's, which the
# request meets itself (config.middleware).
BROKER_QUIET_SECONDS = 5.0
# time.monotonic() until which this process does not try the broker.
_quiet_until = 0.0
# The enqueues not tried (and not logged) since the last line.
_not_tried = RepeatedFailures()


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
    starts the case indexer. For BROKER_QUIET_SECONDS after an enqueue timed out, the
    broker is not tried: such a task fails at once, counted the same way and logged in
    the next line. `robust` decides whether a failure of `when`, or with Q_SYNC (the task
    run inline) of the task itself, is logged instead of raised.
    """

    def enqueue() -> None:
        if when is not None and not when():
            return
        inline = kwargs.get("sync", Conf.SYNC)
        if not inline and is_quiet(_quiet_until):
            _enqueue_not_tried(task, args)
            return
        try:
            async_task(task, *args, broker=_broker(), **kwargs)
        except Exception as exc:
            if inline:
                raise  # the task itself failed, run inline: `robust` decides
            _enqueue_failed(task, args, exc)
        else:
            _enqueued()

    # A function, not a partial: Django names the callback by its __qualname__ when a
    # robust one fails.
    enqueue.__qualname__ = f"enqueue({task})"
    transaction.on_commit(enqueue, robust=robust)


# The process's broker, by the settings it was made for: async_task makes one for each
# task otherwise, and a Redis broker's connection with it (a round trip, and a TLS
# handshake with rediss://, for every completion). Its connection pool reconnects after a
# failure and after a fork.
_brokers: dict[tuple, Broker] = {}


def _broker() -> Broker:
    made_for = (Conf.BROKER_CLASS, str(Conf.REDIS), str(Conf.ORM), Conf.CLUSTER_NAME)
    if made_for not in _brokers:
        _brokers.clear()
        _brokers[made_for] = get_broker()
    return _brokers[made_for]


def _enqueue_failed(task: str, args: tuple, exc: Exception) -> None:
    global _quiet_until
    more = 0
    if _broker_timed_out(exc):
        _quiet_until = quiet_until(BROKER_QUIET_SECONDS)
        # After the window opened: every enqueue not tried in it is within the interval.
        more = _not_tried.failed("broker", every=0.0) or 0
    # The exception's class and first line: a broker's message names its host and port,
    # never the URL's password.
    reason = str(exc).splitlines()[0][:200] if str(exc) else ""
    _log_failure(task, args, exc.__class__.__name__, reason, more)
    metrics.enqueue_failed()


def _enqueue_not_tried(task: str, args: tuple) -> None:
    more = _not_tried.failed("broker", every=BROKER_QUIET_SECONDS)
    if more is not None:  # the window's own line is older than the window
        reason = f"the broker timed out less than {BROKER_QUIET_SECONDS:g} s ago: not tried"
        _log_failure(task, args, "TimeoutError", reason, more)
    metrics.enqueue_failed()


def _enqueued() -> None:
    for _broker, more in _not_tried.over().items():
        logger.warning(
            "tasks enqueued again after the broker timed out "
            "(%d more tasks not enqueued since the last line)",
            more,
        )


def _broker_timed_out(exc: Exception) -> bool:
    # redis-py is loaded only where the broker (or the cache) is Redis: an exception of it
    # can only come from where it is loaded (config.middleware.is_cache_outage).
    redis = sys.modules.get("redis")
    return redis is not None and isinstance(exc, redis.TimeoutError)


def _log_failure(task: str, args: tuple, kind: str, reason: str, more: int) -> None:
    # Tasks take ids: a session id, a list of them, or none (the case indexer).
    subject = args[0] if args else None
    extra: dict[str, object] = {"task": task}
    if isinstance(subject, str):
        extra["session_id"] = subject
    elif isinstance(subject, list | tuple):
        extra["sessions"] = len(subject)
    message = "task not enqueued after its commit: %s: %s"
    if more:
        message += f" ({more} more tasks not enqueued since the last line)"
    logger.error(message, kind, reason, extra=extra)
