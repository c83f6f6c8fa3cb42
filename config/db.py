"""A transaction for a hot path of a few raw statements, in one round trip fewer.

`transaction.atomic()` outside any transaction turns autocommit off and on again around
the work: on MySQL/MariaDB each is a statement of its own (`SET autocommit=...`), so a
transaction of two statements costs five round trips with its COMMIT. Here, with the
connection left in autocommit mode, the transaction is opened by `BEGIN` and ended by
`COMMIT` (or `ROLLBACK`): two round trips around the work, four in all. Inside a
transaction already (an outer `atomic()`, a test's), it is a plain `atomic()` (a
savepoint).

While the block runs, Django is told the connection is not in autocommit mode (it is
not: a transaction is open), so `select_for_update()` may be used in it. The work must
not call `transaction.on_commit` or `atomic()` itself: it hands callbacks to the function
the block yields, which runs them after the commit and drops them on a rollback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import connection, transaction

logger = logging.getLogger(__name__)

AfterCommit = Callable[[Callable[[], object]], None]


def _begin_statement() -> str:
    # SQLite is configured with transaction_mode IMMEDIATE: take the write lock at BEGIN,
    # as atomic() does there.
    mode = connection.settings_dict.get("OPTIONS", {}).get("transaction_mode")
    return f"BEGIN {mode}" if connection.vendor == "sqlite" and mode else "BEGIN"


@contextmanager
def short_transaction() -> Iterator[AfterCommit]:
    """Run the block in one transaction; yields `after_commit(callback)`."""
    if connection.in_atomic_block or not connection.get_autocommit():
        with transaction.atomic():
            yield transaction.on_commit
        return
    callbacks: list[Callable[[], object]] = []
    with connection.cursor() as cursor:
        cursor.execute(_begin_statement())
        connection.autocommit = False
        try:
            yield callbacks.append
            cursor.execute("COMMIT")
        except BaseException:
            _rollback_or_close(cursor)
            raise
        finally:
            connection.autocommit = True
    for callback in callbacks:
        try:
            callback()
        except Exception:
            # As transaction.on_commit(robust=True): the work is committed; a failing
            # follow-up (a metric, a rebuild request) must not turn it into an error.
            logger.exception("callback after commit failed")


def _rollback_or_close(cursor) -> None:  # type: ignore[no-untyped-def]
    """End the open transaction; a connection that cannot is closed, so that no later
    request on it runs inside what is left of this one."""
    try:
        cursor.execute("ROLLBACK")
    except Exception:
        connection.close()
