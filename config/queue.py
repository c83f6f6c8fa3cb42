"""Putting work on the django-q2 queue, only ever after the current transaction commits."""

from typing import Any

from django.db import transaction
from django_q.tasks import async_task


def enqueue_on_commit(task: str, *args: Any, robust: bool = False, **kwargs: Any) -> None:
    """Enqueue `task` once the surrounding transaction commits; never if it rolls back.

    Enqueued inside a transaction, a worker could look for a row that is not committed
    yet, or do work for a request that was rolled back. Outside a transaction this
    enqueues at once. `robust`: a failure to enqueue (or, with Q_SYNC, of the task run
    inline) is logged instead of raised, for work the caller must not fail over.
    """

    def enqueue() -> None:
        async_task(task, *args, **kwargs)

    # A function, not a partial: Django names the callback by its __qualname__ when a
    # robust one fails.
    enqueue.__qualname__ = f"enqueue({task})"
    transaction.on_commit(enqueue, robust=robust)
