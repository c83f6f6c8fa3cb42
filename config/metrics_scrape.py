"""What the /metrics scrape reads at scrape time, within PROBE_DB_DEADLINE_SECONDS
(config/deadline.py): whether the database and the cache answer, the task queue from its
broker, and the collectors apps add (SCRAPE_COLLECTORS).

A scrape must answer during an outage, when these series matter most: a read that fails
or hangs sets its `*_up` gauge to 0 and leaves its other gauges out, never the scrape.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any, NamedTuple

from django.db import DatabaseError
from django.db.models import Count, Q
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from config.deadline import (
    BROKER,
    CACHE,
    DeadlineMissed,
    Read,
    read_started,
    within_deadline,
)
from config.failure_log import RepeatedFailures
from config.health import cache_check, database_check

logger = logging.getLogger(__name__)


class QueueCollector(Collector):
    """The task queue's depth, the age of its oldest waiting task and the tasks workers
    hold, from the broker.

    The broker is read during the scrape, so a broker that cannot be read (Redis down, or
    the database behind the ORM broker; or too slow: ReadAtScrape) must not fail the
    scrape: that is when the other series matter most. `diagnosis_queue_up` says whether
    the read worked (the `up` convention); at 0 the queue gauges are left out.
    """

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            queue = queue_state()
        except Exception as exc:  # whatever the broker's client raises: the read failed
            _broker_unreadable(exc)
            yield _queue_up(0)
            return
        _broker_readable()
        yield _queue_up(1)
        yield GaugeMetricFamily(
            "diagnosis_queue_waiting_tasks", "Tasks waiting in the broker.", value=queue.waiting
        )
        yield GaugeMetricFamily(
            "diagnosis_queue_oldest_task_age_seconds",
            "Time since the oldest waiting task was enqueued (0 when none waits).",
            value=queue.oldest_age,
        )
        if queue.in_flight is not None:
            yield GaugeMetricFamily(
                "diagnosis_queue_tasks_in_flight",
                "Tasks a worker took from the broker and holds (ORM broker: locked until "
                "Q_RETRY passes).",
                value=queue.in_flight,
            )
        if queue.oldest_held is not None:
            yield GaugeMetricFamily(
                "diagnosis_queue_oldest_held_task_enqueued_timestamp_seconds",
                "Unix time the oldest task workers hold was enqueued, 0 when none is held "
                "(ORM broker). The same value for longer than Q_RETRY: a task taken again "
                "and again, never acknowledged.",
                value=queue.oldest_held,
            )


def _queue_up(value: int) -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "diagnosis_queue_up",
        "1 if this scrape could read the task queue's broker, 0 if not (queue gauges omitted).",
        value=value,
    )


# A broker that cannot be read fails every scrape of every process: one WARNING a process
# and BROKER_LOG_SECONDS, as the outage middleware logs an outage (config.failure_log).
BROKER_LOG_SECONDS = 60.0
_broker_failures = RepeatedFailures()


def _broker_unreadable(exc: Exception) -> None:
    more = _broker_failures.failed("broker", every=BROKER_LOG_SECONDS)
    if more is None:
        return
    message = "metrics: the task queue's broker could not be read: %s"
    if more:
        logger.warning(f"{message} (%d more scrapes failed since the last line)", _brief(exc), more)
    else:
        logger.warning(message, _brief(exc))


def _broker_readable() -> None:
    for _broker, more in _broker_failures.over().items():
        logger.warning(
            "metrics: the task queue's broker can be read again "
            "(%d more scrapes failed since the last line)",
            more,
        )


def _brief(exc: Exception) -> str:
    # The exception's class and first line: a driver's message names the host and port,
    # never the URL's password.
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{exc.__class__.__name__}: {first}" if first else exc.__class__.__name__


class QueueState(NamedTuple):
    waiting: int
    oldest_age: float  # seconds since the oldest waiting task was enqueued
    in_flight: int | None  # None: the broker cannot tell (Redis)
    # When the oldest task workers hold was enqueued (Unix time, 0: none held; None: the
    # broker cannot tell). A task is held Q_RETRY at most a take: one held across scrapes
    # further apart than that was taken again, never acknowledged.
    oldest_held: float | None = None


def queue_state() -> QueueState:
    """The configured broker's waiting tasks, the age of the oldest of them, and the tasks
    workers hold."""
    from django_q.brokers import get_broker
    from django_q.brokers.orm import ORM

    broker = get_broker()
    if isinstance(broker, ORM):
        return _orm_queue_state(broker)
    size = int(broker.queue_size() or 0)
    if not size:
        return QueueState(0, 0.0, None)
    # A task taken from Redis leaves the list: what workers hold is not in the broker.
    return QueueState(size, _age(broker.connection.lindex(broker.list_key, 0)) or 0.0, None)


def _orm_queue_state(broker: Any) -> QueueState:
    """The ORM broker keeps a task's row until the task is done: a worker that takes it
    locks it for Q_RETRY seconds, after which it waits again (its worker died). Its `lock`
    is its enqueue time only until it is first taken; the enqueue time itself is the
    `started` that `async_task` signs into the package, kept when the task comes back.
    Ids grow with each enqueue, so the first waiting row by id is the oldest."""
    from django_q.models import OrmQ

    now = timezone.now()
    rows = OrmQ.objects.using(broker.connection.db).filter(key=broker.list_key)
    counts = rows.aggregate(
        waiting=Count("id", filter=Q(lock__lte=now)), in_flight=Count("id", filter=Q(lock__gt=now))
    )
    held = _oldest_held(rows.filter(lock__gt=now)) if counts["in_flight"] else 0.0
    oldest = rows.filter(lock__lte=now).order_by("id").values_list("payload", "lock").first()
    if oldest is None:  # none waits, or taken meanwhile
        return QueueState(counts["waiting"], 0.0, counts["in_flight"], held)
    payload, lock = oldest
    # A package this process cannot read (signed with another SECRET_KEY): from its row's
    # lock, a lower bound (the enqueue time, or when the lost worker's lock expired).
    age = _age(payload)
    if age is None:
        age = max(0.0, (now - lock).total_seconds())
    return QueueState(counts["waiting"], age, counts["in_flight"], held)


HELD_READ = 20  # held rows read for a package that can be read; Q_BULK is 10


def _oldest_held(held: Any) -> float:
    """When the first held task by id (enqueue order, kept when it is taken again) was
    enqueued. A package no worker can read is dropped by the one that took it: passed over."""
    for (payload,) in held.order_by("id").values_list("payload")[:HELD_READ]:
        started = _started(payload)
        if started is not None:
            return started.timestamp()
    return 0.0


def _age(package: Any) -> float | None:
    """Seconds since the signed task `package` was enqueued; None when it cannot be read."""
    started = _started(package)
    if started is None:
        return None
    return max(0.0, (timezone.now() - started).total_seconds())


def _started(package: Any) -> datetime | None:
    """When the signed task `package` was enqueued; None when it cannot be read."""
    from django_q.signing import SignedPackage

    try:
        started = SignedPackage.loads(package)["started"]
    except Exception:  # a task package this version cannot read: its time is unknown
        return None
    return started if isinstance(started, datetime) else None


# Collectors an app adds to every scrape (read from its tables, with the queue, within the
# deadline), by its AppConfig.ready: config stands below the apps and imports none of them.
SCRAPE_COLLECTORS: list[Collector] = []


class ReadAtScrape(Collector):
    """`diagnosis_database_up` and `diagnosis_cache_up`, then the queue's and the apps'
    collectors. The database and the collectors are read in the database's probe thread,
    the cache at the same time in its own, and a Redis broker in a third, each within the
    deadline (config/deadline.py): a database that hangs leaves the collectors out, and
    with the ORM broker `diagnosis_queue_up` 0."""

    def collect(self) -> Iterator[Any]:
        cache_read = read_started(_cache_answers, lane=CACHE)
        queue = QueueCollector()
        # A Redis broker is read in a lane of its own: a database that hangs is not taken
        # for the broker (diagnosis_queue_up 0 would page for the broker).
        broker_read = None
        if not _broker_is_the_database():
            broker_read = read_started(lambda: list(queue.collect()), lane=BROKER)
        read = (*([queue] if broker_read is None else []), *SCRAPE_COLLECTORS)
        try:  # a hung read would outlast Prometheus' scrape_timeout and fail the whole scrape
            database_up, families = within_deadline(
                lambda: (_database_answers(), [f for c in read for f in c.collect()])
            )
        except DeadlineMissed as exc:
            database_up, families = False, []
            if broker_read is None:
                _broker_unreadable(exc)
                families = [_queue_up(0)]
        yield _up("database", database_up)
        yield _up("cache", _answered(cache_read))
        if broker_read is not None:
            try:
                yield from broker_read.result()
            except DeadlineMissed as exc:
                _broker_unreadable(exc)
                yield _queue_up(0)
        yield from families


def _broker_is_the_database() -> bool:
    """Whether django-q2's broker is the ORM's (Q_CLUSTER "orm"), as its get_broker()
    decides."""
    from django_q.conf import Conf

    return bool(Conf.ORM)


_UP_HELP = {
    "database": "1 if this scrape could read the database within PROBE_DB_DEADLINE_SECONDS, "
    "0 if not (gauges read from it omitted).",
    "cache": "1 if this scrape could read the cache within PROBE_DB_DEADLINE_SECONDS, 0 if not "
    "(the API answers 503 meanwhile).",
}


def _up(name: str, up: bool) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"diagnosis_{name}_up", _UP_HELP[name], value=int(up))


def _database_answers() -> bool:
    # /readyz's check. A failure is answered here, not raised: the collectors after it
    # still run (the Redis broker does not need the database), each leaving out what it
    # cannot read.
    try:
        database_check()
    except DatabaseError:
        return False
    return True


def _cache_answers() -> bool:
    return cache_check() == "ok"  # /readyz's check: one short-lived write


def _answered(read: Read[bool]) -> bool:
    try:
        return read.result()
    except DeadlineMissed:  # a cache that hangs, or whose earlier read still hangs
        return False
