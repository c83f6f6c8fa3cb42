"""Putting work on the django-q2 queue, only ever after the current transaction commits."""

from functools import partial
from typing import Any

from django.db import transaction
from django_q.tasks import async_task


def enqueue_on_commit(task: str, *args: Any, **kwargs: Any) -> None:
    """Enqueue `task` once the surrounding transaction commits; never if it rolls back.

    Enqueued inside a transaction, a worker could look for a row that is not committed
    yet, or do work for a request that was rolled back. Outside a transaction this
    enqueues at once.
    """
    transaction.on_commit(partial(async_task, task, *args, **kwargs))
