"""Two writers racing on MariaDB, made to meet: a third connection holds a row lock, the
first writer comes to wait behind it, the second is sent, and the lock is let go."""

import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection

WAIT = 30


def waiting_statements() -> int:
    """Statements of the other connections to the test database that are running now
    (blocked on a row lock, as nothing else in these tests takes long). SQL: the server's
    process list has no model."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
            " WHERE db = DATABASE() AND command = 'Query' AND id <> CONNECTION_ID()"
        )
        return cursor.fetchone()[0]


def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "a writer never came to wait"
        time.sleep(0.05)


def in_thread(work: Callable[[], Any], results: dict, name: str) -> threading.Thread:
    """`work` run on a connection of its own; its result, or what it raised, in
    results[name]."""

    def run() -> None:
        try:
            results[name] = work()
        except Exception as exc:  # the test reads what happened
            results[name] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def met(hold: Callable[[], None], first: Callable[[], Any], second: Callable[[], Any]) -> dict:
    """`hold` (which locks a row) holding its transaction while `first` comes to wait
    and `second` is sent; then both finish. Their results under "first" and "second"."""
    from django.db import transaction

    held, release = threading.Event(), threading.Event()

    def holding() -> None:
        with transaction.atomic():
            hold()
            held.set()
            release.wait(WAIT)

    results: dict = {}
    holder = in_thread(holding, results, "holder")
    assert held.wait(WAIT)
    one = in_thread(first, results, "first")
    until(lambda: waiting_statements() >= 1 or "first" in results)
    assert "first" not in results, f"the first writer did not wait: {results}"
    two = in_thread(second, results, "second")
    # The second either finishes at once or comes to wait behind the first.
    until(lambda: "second" in results or waiting_statements() >= 2)
    release.set()
    for thread in (holder, one, two):
        thread.join(WAIT)
    return results
