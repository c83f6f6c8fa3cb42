"""A few seconds in which a process does not try a server that just timed out.

A server that hangs (the connection up, no answer) holds each request that uses it for the
client's timeout: with sync workers, a few such requests take every worker of a node. So
once a call of this process timed out, its next calls fail at once, as a refused
connection would, until the window is over; then one call tries the server again. Only a
timeout opens a window: a refused connection fails at once already, and trying it each
time finds the server as soon as it is back.

Per process, in memory: each process finds out for itself, for one timeout of its own.
The caller keeps the deadline (a module's `_quiet_until`, which a test sets back to 0.0)
and says what failing at once means. Used by the cache (config/cache_backend.py) and by
the task queue's enqueue (config/queue.py).
"""

import time


def quiet_until(seconds: float) -> float:
    """The deadline of a window opened now: a time.monotonic() `seconds` ahead."""
    return time.monotonic() + seconds


def is_quiet(until: float) -> bool:
    """Whether the window that ends at `until` (0.0: none opened) is still open."""
    return time.monotonic() < until
