"""Transactions for a hot path of a few raw statements, in as few round trips as may be.

`run_in_one_transaction(statements)`: on MySQL/MariaDB, outside any transaction, the
statements go to the server as one multi-statement query between `BEGIN` and `COMMIT`
(mysqlclient allows several statements per query unless `OPTIONS` says
`"multi_statements": False`): one round trip for the whole transaction, each statement's
row count and rows read back in order. Elsewhere (SQLite, an outer transaction, multiple
statements switched off) they run one by one in `short_transaction()`.

`short_transaction()`: a transaction in one round trip fewer than `atomic()`.

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

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
        _robustly(callback)


def run_after_commit(callback: Callable[[], object]) -> None:
    """Run `callback` once the current transaction commits (at once outside one); a
    failing callback is logged, never raised."""
    if connection.in_atomic_block:
        transaction.on_commit(partial(_robustly, callback))
    else:
        _robustly(callback)


def _robustly(callback: Callable[[], object]) -> None:
    try:
        callback()
    except Exception:
        # As transaction.on_commit(robust=True): the work is committed; a failing
        # follow-up (a metric, a rebuild request) must not turn it into an error.
        logger.exception("callback after commit failed")


Statement = tuple[str, Sequence[object]]


@dataclass(frozen=True)
class Outcome:
    """What one statement did: rows matched (UPDATE), inserted (INSERT) or read."""

    rowcount: int
    rows: list[tuple]


def run_in_one_transaction(statements: Sequence[Statement]) -> list[Outcome]:
    """Run the statements in order in one transaction; what each did, in the same order.

    Committed when it returns, unless called inside an outer transaction (then part of
    it). On an error the transaction is rolled back and the error raised. The SQL must
    not hold a literal `%` (parameters are `%s`) or a `;`, nor change the transaction
    itself. Follow-ups go to `run_after_commit`.
    """
    db = connections[DEFAULT_DB_ALIAS]
    if not _one_query_possible(db):
        with short_transaction():
            return run_statements(statements)
    query = ";".join(["BEGIN", *(sql for sql, _ in statements), "COMMIT"])
    params = [value for _, values in statements for value in values]
    with db.cursor() as cursor:
        try:
            cursor.execute(query, params)  # BEGIN's result
            # The results after the first straight from the driver's cursor, with the
            # driver's errors turned into Django's as Django's own cursor does.
            results = cursor.cursor
            outcomes = []
            with db.wrap_database_errors:
                for _ in statements:
                    results.nextset()
                    outcomes.append(_outcome(results))
                results.nextset()  # COMMIT's
        except BaseException:
            _rollback_or_close(cursor)
            raise
    return outcomes


def run_statements(statements: Sequence[Statement]) -> list[Outcome]:
    """Run the statements one by one in the caller's transaction; what each did."""
    outcomes = []
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)
            outcomes.append(_outcome(cursor))
    return outcomes


def _one_query_possible(db: BaseDatabaseWrapper) -> bool:
    return (
        db.vendor == "mysql"
        and not db.in_atomic_block
        and db.get_autocommit()
        and db.settings_dict.get("OPTIONS", {}).get("multi_statements", True)
    )


def _outcome(cursor) -> Outcome:  # type: ignore[no-untyped-def]
    if cursor.description is None:
        return Outcome(cursor.rowcount, [])
    rows = list(cursor.fetchall())
    return Outcome(len(rows), rows)


def _rollback_or_close(cursor) -> None:  # type: ignore[no-untyped-def]
    """End the open transaction; a connection that cannot is closed, so that no later
    request on it runs inside what is left of this one."""
    try:
        cursor.execute("ROLLBACK")
    except Exception:
        connection.close()
