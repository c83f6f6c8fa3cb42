"""The admin history (django.contrib.admin's LogEntry) of changes made in bulk: by an
admin action, an import. One entry per object, as the object's own page would write it,
written a batch at a time."""

import json
from collections.abc import Iterable
from itertools import islice
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model

# Entries written per statement (the database may split one further).
BATCH = 1000

# The text shown, or the admin's structured form ([{"changed": {"fields": [...]}}]),
# stored in the language of the code and shown translated.
Message = str | list[dict[str, Any]]


def log_entries(
    user_id: Any,
    objects: Iterable[Model] | Iterable[tuple[Model, Message]],
    action_flag: int,
    message: Message | None = None,
) -> int:
    """Add to the history of each object an entry by the user `user_id`, of
    `action_flag` (ADDITION, CHANGE, DELETION). `objects` are instances all logged with
    `message`; with no `message`, (instance, message) pairs, each logged with its own
    (an object may come more than once). Read as they are written, a batch at a time.
    The entries written."""
    pairs = iter(objects) if message is None else ((obj, message) for obj in objects)
    written = 0
    while batch := list(islice(pairs, BATCH)):
        LogEntry.objects.bulk_create(
            [_entry(user_id, obj, action_flag, text) for obj, text in batch]  # type: ignore[misc]
        )
        written += len(batch)
    return written


def _entry(user_id: Any, obj: Model, action_flag: int, message: Message) -> LogEntry:
    return LogEntry(
        user_id=user_id,
        content_type=ContentType.objects.get_for_model(obj, for_concrete_model=False),
        object_id=str(obj.pk),
        object_repr=str(obj)[:200],
        action_flag=action_flag,
        change_message=json.dumps(message) if isinstance(message, list) else message,
    )
