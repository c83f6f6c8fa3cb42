"""Races between requests of /v1/traces that the losing request retries itself.

Two requests carrying the same new span race on its unique key, requests for one trace
sent at once may deadlock on its sessions' rows, and a trace-id session one request
writes to may be moved by another; the loser tries again (and then finds the span
stored, the rows free, the session moved), up to RACE_ATTEMPTS in all.
"""

from collections.abc import Callable
from typing import TypeVar

from django.db import IntegrityError, OperationalError

# Driver codes of a row refused for another transaction's rows, which a retry reads: a
# duplicate key (MySQL/MariaDB 1062, 1586; SQLite's primary key 1555 and unique 2067) or
# a foreign key whose row another transaction deleted or holds (1451, 1452; SQLite 787).
_RACE_CODES = frozenset({1062, 1586, 1555, 2067, 1451, 1452, 787})
# A transaction the database rolled back for another's locks, which the same request
# retries: MySQL/MariaDB's deadlock (1213) and lock wait timeout (1205). Requests for one
# trace sent at once (an exporter's parallel batches) lock the same sessions and spans.
_ROLLED_BACK_CODES = frozenset({1213, 1205})
RACE_ATTEMPTS = 3

T = TypeVar("T")


def retried(work: Callable[[], T]) -> T:
    """`work` (one transaction) run again when it lost a race, up to RACE_ATTEMPTS in all."""
    attempt = 1
    while True:
        try:
            return work()
        except (IntegrityError, OperationalError) as exc:
            if attempt == RACE_ATTEMPTS or not lost_a_race(exc):
                raise
            attempt += 1


def lost_a_race(exc: BaseException) -> bool:
    """Whether `exc` refused a row for another transaction's rows (a unique or foreign
    key), not for its values (a CHECK or NOT NULL constraint), which fail again; or rolled
    the transaction back for another's locks (a deadlock)."""
    if isinstance(exc, OperationalError):
        code = exc.args[0] if exc.args else None
        return isinstance(code, int) and code in _ROLLED_BACK_CODES
    if not isinstance(exc, IntegrityError):
        return False
    code = getattr(exc.__cause__, "sqlite_errorcode", None)  # Django keeps the message
    if code is None and exc.args:
        code = exc.args[0]  # MySQL/MariaDB: (code, message)
    return isinstance(code, int) and code in _RACE_CODES
