"""Races between requests of /v1/traces that the losing request retries itself.

Two requests carrying the same new span race on its unique key, requests for one trace
sent at once may deadlock on its sessions' rows, and a trace-id session one request
writes to may be moved by another; the loser tries again (and then finds the span
stored, the rows free, the session moved), up to RACE_ATTEMPTS in all, after a pause
that lets the winner commit: a few tens of milliseconds, twice as long after each loss,
drawn at random so that two requests that lost to each other do not meet again. A race
lost at every attempt is no outage: the view answers 503 (the exporter sends the batch
again) and logs a WARNING naming it (`race_named`).
"""

import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import IntegrityError, OperationalError

# Driver codes of a row refused for another transaction's rows, which a retry reads: a
# duplicate key (MySQL/MariaDB 1062, 1586; SQLite's primary key 1555 and unique 2067) or
# a foreign key whose row another transaction deleted or holds (1451, 1452; SQLite 787).
_RACE_CODES = frozenset({1062, 1586, 1555, 2067, 1451, 1452, 787})
# A transaction the database rolled back for another's locks, which the same request
# retries: MySQL/MariaDB's deadlock (1213). Requests for one trace sent at once (an
# exporter's parallel batches) lock the same sessions and spans. Not a lock wait timeout
# (1205): each attempt would wait DB_LOCK_WAIT_TIMEOUT again, five of them past gunicorn's
# worker timeout; it is answered 503 at once (config.middleware), the exporter retries.
_ROLLED_BACK_CODES = frozenset({1213})
# Six requests at once, each with spans of the same 20 traces (a Collector's batches), on
# MariaDB, 540 requests lost 179 first attempts, 3 fourth ones and no fifth.
RACE_ATTEMPTS = 5
# The longest pause before the second attempt; each pause is drawn between half the
# longest and the longest, which doubles after each loss (10-20 ms, 20-40, 40-80, 80-160:
# at most 300 ms in all).
_FIRST_PAUSE_SECONDS = 0.02

T = TypeVar("T")


class RaceLost(Exception):
    """What an attempt read was moved by a request committing at the same time (a session
    gone since it was read): the next attempt reads it again."""


def retried(work: Callable[[], T]) -> T:
    """`work` (one transaction) run again when it lost a race, up to RACE_ATTEMPTS in all,
    a pause apart (see the module's docstring)."""
    attempt = 1
    while True:
        try:
            return work()
        except (IntegrityError, OperationalError, RaceLost) as exc:
            if attempt == RACE_ATTEMPTS or not lost_a_race(exc):
                raise
        longest = _FIRST_PAUSE_SECONDS * 2 ** (attempt - 1)
        time.sleep(random.uniform(longest / 2, longest))  # noqa: S311 (no secret)
        attempt += 1


def lost_a_race(exc: BaseException) -> bool:
    """Whether `exc` refused a row for another transaction's rows (a unique or foreign
    key), not for its values (a CHECK or NOT NULL constraint), which fail again; or rolled
    the transaction back for another's locks (a deadlock); or found what it read moved
    (RaceLost)."""
    if isinstance(exc, RaceLost):
        return True
    code = _driver_code(exc)
    if isinstance(exc, OperationalError):
        return code in _ROLLED_BACK_CODES
    return isinstance(exc, IntegrityError) and code in _RACE_CODES


def race_named(exc: BaseException) -> str:
    """The driver's code and message of a race lost (`lost_a_race`), for the log: no query
    text, which may carry what was sent."""
    message = next((str(arg) for arg in reversed(exc.args) if isinstance(arg, str)), "")
    code = _driver_code(exc)
    return " ".join(str(part) for part in (code, message) if part) or type(exc).__name__


def _driver_code(exc: BaseException) -> int | None:
    code = getattr(exc.__cause__, "sqlite_errorcode", None)  # Django keeps the message
    if code is None and exc.args:
        code = exc.args[0]  # MySQL/MariaDB: (code, message)
    return code if isinstance(code, int) else None
