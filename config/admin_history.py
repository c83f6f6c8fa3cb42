"""The admin history (django.contrib.admin's LogEntry) of changes made in bulk: by an
admin action, an import. One entry per object, as the object's own page would write it,
written a batch at a time."""

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.utils.text import capfirst
from django.utils.translation import override

# Entries written per statement (the database may split one further).
BATCH = 1000

# The text shown, or the admin's structured form ([{"changed": {"fields": [...]}}]),
# stored in the language of the code and shown translated.
Message = str | list[dict[str, Any]]


def changed_fields(model: type[Model], *names: str) -> list[dict[str, Any]]:
    """The message of a change to the fields `names` of `model`, each named as the
    object's page names it (Django's form label: the verbose name, capitalised), in the
    language of the code: LogEntry.get_change_message translates it when it is shown."""
    with override(None):
        labels = [capfirst(str(model._meta.get_field(name).verbose_name)) for name in names]
    return [{"changed": {"fields": labels}}]


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
    if message is None:
        pairs: Iterator = (
            (type(obj), obj.pk, str(obj), _stored(text))
            for obj, text in objects  # type: ignore[misc]
        )
    else:
        stored = _stored(message)
        pairs = ((type(obj), obj.pk, str(obj), stored) for obj in objects)
    return _write(user_id, pairs, action_flag)


def log_keyed_entries(
    user_id: Any,
    model: type[Model],
    keys: Iterable[tuple[Any, str]],
    action_flag: int,
    message: Message,
) -> int:
    """As log_entries with one `message`, for objects of `model` known by their primary
    key and their text (what str() of the object gives): a bulk action logs every row
    it was given without loading each one as an instance. The entries written."""
    stored = _stored(message)
    return _write(user_id, ((model, pk, text, stored) for pk, text in keys), action_flag)


def _write(user_id: Any, entries: Iterator[tuple[type[Model], Any, str, str]], flag: int) -> int:
    # The content type of each model looked up once, not once per entry.
    content_types: dict[type[Model], int] = {}
    written = 0
    while batch := list(islice(entries, BATCH)):
        LogEntry.objects.bulk_create(
            [
                LogEntry(
                    user_id=user_id,
                    content_type_id=_content_type_id(model, content_types),
                    object_id=str(pk),
                    object_repr=text[:200],
                    action_flag=flag,
                    change_message=message,
                )
                for model, pk, text, message in batch
            ]
        )
        written += len(batch)
    return written


def _content_type_id(model: type[Model], known: dict[type[Model], int]) -> int:
    if model not in known:
        # A proxy's own (a bad case's history is the bad case's, not the session's).
        known[model] = ContentType.objects.get_for_model(model, for_concrete_model=False).pk
    return known[model]


def _stored(message: Message) -> str:
    return json.dumps(message) if isinstance(message, list) else message
