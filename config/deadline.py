"""The database and cache reads of /readyz and the database reads of the /metrics scrape,
bounded by a deadline.

A database that hangs (its TCP connection up, no answer) holds a read for the driver's
read timeout and each reconnection for its connect timeout: tens of seconds, longer than a
load balancer's probe or Prometheus' scrape waits, and long enough for probes every few
seconds to take every gunicorn worker (then /healthz stalls too, and a healthy pod is
restarted). A Redis that hangs holds a read for its client's socket timeout, which is none
unless REDIS_URL's options set one. So these reads run in a background thread per process,
one for the database and one for the cache (a cache that hangs neither holds up the
database's reads nor is taken for the database), and the caller waits
PROBE_DB_DEADLINE_SECONDS at most: past it, the probe answers as if the database (or the
cache) were unreachable, and the read finishes (or fails) on its own. While a thread still
holds an earlier read, a new probe does not queue behind it: it is answered at once, the
same way.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Generic, TypeVar

from django.conf import settings
from django.db import connections

T = TypeVar("T")


class DeadlineMissed(Exception):
    """The read did not finish within the deadline, or an earlier one still runs; the
    message says which ("timed out after 3 s")."""


class Lane:
    """One background thread of this process and the read it holds, if any."""

    def __init__(self, name: str, *, reads_database: bool) -> None:
        self.name = name
        self.reads_database = reads_database
        self.executor: ThreadPoolExecutor | None = None
        self.pending: Future | None = None


DATABASE = Lane("probe-db", reads_database=True)
CACHE = Lane("probe-cache", reads_database=False)
# The task queue's Redis broker (with the ORM broker, the queue is read with the database).
BROKER = Lane("probe-broker", reads_database=False)

_lock = threading.Lock()


class Read(Generic[T]):
    """A read under way in its lane, and when its caller stops waiting for it."""

    def __init__(self, future: Future, seconds: float) -> None:
        self._future = future
        self._seconds = seconds
        self._until = time.monotonic() + seconds

    def result(self) -> T:
        """The read's result, or its exception, if it ends by the deadline; else
        DeadlineMissed."""
        try:
            return self._future.result(timeout=max(0.0, self._until - time.monotonic()))
        except FutureTimeout:
            raise DeadlineMissed(f"timed out after {self._seconds:g} s") from None


def read_started(
    read: Callable[[], T], *, seconds: float | None = None, lane: Lane = DATABASE
) -> Read[T]:
    """`read()` started in `lane`'s thread, its deadline `seconds` from now
    (PROBE_DB_DEADLINE_SECONDS by default): the caller does other work meanwhile, then
    waits for it with `.result()`.

    Inside a transaction of the caller's (a test's, in practice: the probes run outside
    any), a read of the database runs here instead: another thread's connection would not
    see the rows the transaction wrote."""
    if seconds is None:
        seconds = settings.PROBE_DB_DEADLINE_SECONDS
    future: Future = Future()
    if lane.reads_database and any(
        conn.in_atomic_block for conn in connections.all(initialized_only=True)
    ):
        try:
            future.set_result(read())
        except Exception as exc:
            future.set_exception(exc)
        return Read(future, seconds)
    with _lock:
        if lane.pending is not None and not lane.pending.done():
            future.set_exception(DeadlineMissed("still waiting for an earlier check"))
            return Read(future, seconds)
        if lane.executor is None:
            lane.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=lane.name)
        # In the caller's context: what the read logs names the request (its request id).
        lane.pending = lane.executor.submit(contextvars.copy_context().run, _in_probe_thread, read)
        return Read(lane.pending, seconds)


def within_deadline(
    read: Callable[[], T], *, seconds: float | None = None, lane: Lane = DATABASE
) -> T:
    """`read()`'s result, or its exception, if it ends within `seconds`
    (PROBE_DB_DEADLINE_SECONDS by default); else DeadlineMissed."""
    return read_started(read, seconds=seconds, lane=lane).result()


def _in_probe_thread(read: Callable[[], T]) -> T:
    # The thread keeps its connections between reads (a probe every few seconds should not
    # reconnect each time) as long as CONN_MAX_AGE allows, as a request's would be kept;
    # after a failure they are closed, so the next read connects afresh: one `read` raised,
    # or one it caught (a scrape's collector leaves its gauges out and carries on).
    for conn in connections.all(initialized_only=True):
        conn.close_if_unusable_or_obsolete()
    try:
        result = read()
    except BaseException:
        for conn in connections.all(initialized_only=True):
            conn.close()
        raise
    for conn in connections.all(initialized_only=True):
        if conn.errors_occurred:
            conn.close()
    return result
