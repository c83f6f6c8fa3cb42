"""The database reads of /readyz and of the /metrics scrape, bounded by a deadline.

A database that hangs (its TCP connection up, no answer) holds a read for the driver's
read timeout and each reconnection for its connect timeout: tens of seconds, longer than a
load balancer's probe or Prometheus' scrape waits, and long enough for probes every few
seconds to take every gunicorn worker (then /healthz stalls too, and a healthy pod is
restarted). So these reads run in one background thread per process, and the caller waits
PROBE_DB_DEADLINE_SECONDS at most: past it, the probe answers as if the database were
unreachable, and the read finishes (or fails) on its own. While the thread still holds an
earlier read, a new probe does not queue behind it: it is answered at once, the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from django.conf import settings
from django.db import connections

T = TypeVar("T")


class DeadlineMissed(Exception):
    """The read did not finish within the deadline, or an earlier one still runs; the
    message says which ("timed out after 3 s")."""


_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_pending: Future | None = None


def within_deadline(read: Callable[[], T], *, seconds: float | None = None) -> T:
    """`read()`'s result, or its exception, if it ends within `seconds`
    (PROBE_DB_DEADLINE_SECONDS by default); else DeadlineMissed.

    Inside a transaction of the caller's (a test's, in practice: the probes run outside
    any), `read` runs here instead: another thread's connection would not see the rows the
    transaction wrote."""
    if seconds is None:
        seconds = settings.PROBE_DB_DEADLINE_SECONDS
    if any(conn.in_atomic_block for conn in connections.all(initialized_only=True)):
        return read()
    global _executor, _pending
    with _lock:
        if _pending is not None and not _pending.done():
            raise DeadlineMissed("still waiting for an earlier check")
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="probe-db")
        _pending = pending = _executor.submit(_in_probe_thread, read)
    try:
        return pending.result(timeout=seconds)
    except FutureTimeout:
        raise DeadlineMissed(f"timed out after {seconds:g} s") from None


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
