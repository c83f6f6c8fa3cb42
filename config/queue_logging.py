"""django-q2's own lines (the `django-q` logger, in every `qcluster` process): in English,
and an outage's repeated lines once a REPEAT_LOG_SECONDS.

django-q2 translates its messages into the active language, LANGUAGE_CODE in a worker
(Chinese by default): "意外宕机后pusher … 已重生" is what "reincarnated pusher … after
sudden death" reads there. A log is searched, alerted on and read by people of any
language, so each such line is put back into django-q2's English, found from the same
catalog that translated it; the admin's language is left as it is.

While the broker (Redis, or the database behind the ORM broker) cannot be reached, the
cluster's guard writes the same line at every cycle (twice a second) and each pusher it
starts again a traceback: one line per kind of message and interval for the whole
cluster (its processes share the count: SharedRepeats), the next one saying how many were
left out (`repeats`), as config/failure_log.py does for requests. A lost connection is
one line with the exception's class and first line, without its traceback. The lines
about tasks (the worker's, the monitor's) are all kept.
"""

from __future__ import annotations

import gettext
import hashlib
import logging
import mmap
import re
import struct
import time
from functools import cache
from pathlib import Path

from django.conf import settings
from django.utils import translation

REPEAT_LOG_SECONDS = 60.0


class SharedRepeats:
    """When each kind of line was last written and how many were left out since, as
    config.failure_log.RepeatedFailures decides it, but in memory shared by every process
    forked after it was made: django-q2 starts a new pusher (a fork of its sentinel)
    after each failure, which would otherwise write the line again as its first.

    A table of SLOTS kinds (a hash, the time written, the lines left out), without a lock:
    django-q2 kills processes, and a lock held by a killed one would stop every process's
    logging. Two processes at the same moment may both write a line, and a kind pushed
    out of a full table is written again: a line too many, never a line lost."""

    SLOTS = 256
    _SLOT = struct.Struct("QdQ")

    def __init__(self) -> None:
        # Anonymous and MAP_SHARED (mmap's default): shared with every child forked later.
        self._table = mmap.mmap(-1, self.SLOTS * self._SLOT.size)

    def failed(self, kind: str, *, every: float) -> int | None:
        """None: leave this line out; else write it, after that many left out."""
        key = int.from_bytes(hashlib.blake2b(kind.encode(), digest_size=8).digest()) or 1
        slot = self._slot(key)
        found, last, since = self._SLOT.unpack_from(self._table, slot)
        now = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process of the machine
        if found == key and now - last < every:
            self._SLOT.pack_into(self._table, slot, key, last, since + 1)
            return None
        self._SLOT.pack_into(self._table, slot, key, now, 0)
        return since if found == key else 0

    def _slot(self, key: int) -> int:
        home = key % self.SLOTS
        for step in range(self.SLOTS):
            offset = ((home + step) % self.SLOTS) * self._SLOT.size
            found = self._SLOT.unpack_from(self._table, offset)[0]
            if found in (key, 0):
                return offset
        return home * self._SLOT.size  # full: the kind at home is forgotten


# Made when the logging is set up (django.setup()), so in a `qcluster`'s main process
# before it forks its sentinel, pusher, monitor and workers.
_repeats = SharedRepeats()

# django-q2's modules whose lines say what became of a task: never left out.
_TASK_MODULES = frozenset({"worker", "monitor"})
# Exceptions that mean a server could not be reached, by class name (redis-py's and the
# database drivers' have no common base but OSError, which not all of them extend).
_CONNECTION_ERRORS = frozenset(
    {"ConnectionError", "TimeoutError", "OperationalError", "InterfaceError"}
)
# What differs between two lines of one kind: process names (hex), pids, counts, ports.
_VARYING = re.compile(r"[0-9a-f]{8,}|\d+")
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


# Set on a record once a QueueLogFilter has decided on it (a private attribute: no field of
# the line, config.logging leaves those out).
_DECIDED = "_queue_log_kept"


class QueueLogFilter(logging.Filter):
    """On the `django-q` logger (config/logging_settings.py)."""

    def filter(self, record: logging.LogRecord) -> bool:
        # Logging set up twice in one process (django.setup() again: importing config.wsgi
        # does) leaves two of these on the logger; the second keeps the first's decision
        # rather than taking the line the first let through for a repeat.
        decided = getattr(record, _DECIDED, None)
        if decided is None:
            decided = self._decide(record)
            setattr(record, _DECIDED, decided)
        return decided

    def _decide(self, record: logging.LogRecord) -> bool:
        message = in_english(record.getMessage())
        if record.exc_info and _lost_connection(record.exc_info[1]):
            exc = record.exc_info[1]
            first = str(exc).splitlines()[0][:200] if str(exc) else ""
            message = f"{message}: {exc.__class__.__name__}: {first}".rstrip(": ")
            record.exc_info = None
            record.exc_text = None
        record.msg, record.args = message, None
        if record.module in _TASK_MODULES:
            return True
        return _first_in_interval(record, message)


def _first_in_interval(record: logging.LogRecord, message: str) -> bool:
    kind = f"{record.levelno}:{_VARYING.sub('#', message)}"
    more = _repeats.failed(kind, every=REPEAT_LOG_SECONDS)
    if more is None:
        return False
    if more:
        record.msg = f"{message} ({more} more since the last line)"
        record.repeats = more
    return True


def _lost_connection(exc: BaseException | None) -> bool:
    if exc is None:
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & _CONNECTION_ERRORS) or isinstance(exc, OSError)


def in_english(message: str) -> str:
    """`message` as django-q2 wrote it in English, when it is one of its messages
    translated into a language of LANGUAGES; else as it is."""
    if message.isascii():
        return message
    exact, patterns = _english_of()
    if message in exact:
        return exact[message]
    for pattern, msgid in patterns:
        found = pattern.fullmatch(message)
        if found:
            return msgid % found.groupdict()
    return message


@cache
def _english_of() -> tuple[dict[str, str], list[tuple[re.Pattern[str], str]]]:
    """Each translation of a django-q2 message (as this installation translates it, the
    project's catalog included) back to the message: exact texts, and patterns for those
    with %(name)s placeholders."""
    exact: dict[str, str] = {}
    patterns: list[tuple[re.Pattern[str], str]] = []
    msgids = _django_q_msgids()
    for code, _name in settings.LANGUAGES:
        if code == "en":
            continue
        with translation.override(code):
            for msgid in msgids:
                translated = translation.gettext(msgid)
                if translated == msgid or translated.isascii():
                    continue
                if "%(" not in msgid:
                    exact[translated] = msgid
                    continue
                pattern = _pattern(translated, set(_PLACEHOLDER.findall(msgid)))
                if pattern is not None:
                    patterns.append((pattern, msgid))
    return exact, patterns


def _pattern(translated: str, names: set[str]) -> re.Pattern[str] | None:
    parts, seen, position = [], set(), 0
    for placeholder in _PLACEHOLDER.finditer(translated):
        name = placeholder.group(1)
        if name not in names:
            return None
        parts.append(re.escape(translated[position : placeholder.start()]))
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        position = placeholder.end()
    parts.append(re.escape(translated[position:]))
    if seen != names:
        return None
    return re.compile("".join(parts), re.DOTALL)


def _django_q_msgids() -> list[str]:
    import django_q

    msgids: set[str] = set()
    for mo in (Path(django_q.__file__).parent / "locale").glob("*/LC_MESSAGES/django.mo"):
        with mo.open("rb") as fp:
            catalog = gettext.GNUTranslations(fp)._catalog  # type: ignore[attr-defined]
        msgids.update(key for key in catalog if isinstance(key, str) and key)
    return sorted(msgids)
