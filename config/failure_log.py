"""When to log a failure that repeats on every request or scrape during an outage.

A database or broker that cannot be reached fails everything that reads it: thousands of
identical lines a minute under load. A process writes one line per kind of failure and
interval instead, saying how many failures it did not log since the last line, and one
line when the thing works again. The caller writes the lines; this only decides when.
"""

import threading
import time
from collections.abc import Collection


class RepeatedFailures:
    """Per process: when each kind of failure ("database", "cache", "broker") was last
    logged, and how many failures of it have not been logged since."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._since: dict[str, int] = {}

    def failed(self, what: str, *, every: float) -> int | None:
        """Count a failure of `what`. None when its last line is under `every` seconds
        old (say nothing); else log one now: the number is how many failures were not
        logged since the last line (0 for the first of an outage)."""
        now = time.monotonic()
        with self._lock:
            last = self._last.get(what)
            if last is not None and now - last < every:
                self._since[what] = self._since.get(what, 0) + 1
                return None
            more = self._since.pop(what, 0)
            self._last[what] = now
        return more

    def failing(self) -> frozenset[str]:
        """The kinds failing now (logged, and not over since). Empty (and read without the
        lock) in the usual case, where nothing is failing."""
        if not self._last:
            return frozenset()
        with self._lock:
            return frozenset(self._last)

    def over(self, kinds: Collection[str] | None = None) -> dict[str, int]:
        """Every kind that was failing (of `kinds` only, when named), with how many
        failures were not logged since its last line; forgotten, so the next failure is
        logged at once. Empty (and read without the lock) in the usual case, where
        nothing was failing."""
        if not self._last:
            return {}
        with self._lock:
            ended = [what for what in self._last if kinds is None or what in kinds]
            for what in ended:
                del self._last[what]
            return {what: self._since.pop(what, 0) for what in ended}
