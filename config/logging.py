"""Structured logs: one JSON object per line, with the session id on every line about a
session (bound per request or task, or passed as `extra={"session_id": ...}`)."""

import contextlib
import contextvars
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime

from django.core.signals import request_started

_session_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("session_id", default=None)

# Attributes every LogRecord has; anything else was passed in `extra` and is logged.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


@contextlib.contextmanager
def bind_session_id(session_id: str | None) -> Iterator[None]:
    """Every log line inside the block carries this session id."""
    token = _session_id.set(session_id)
    try:
        yield
    finally:
        _session_id.reset(token)


def tag_request(session_id: str | None) -> None:
    """Name the session the current request is about, for the rest of the request.

    Unlike bind_session_id this outlives the view, so Django's own request log line
    (written after the view returns, e.g. "Conflict: ...") carries it too. Cleared when
    the next request starts.
    """
    _session_id.set(session_id)


def _clear_request_tag(**kwargs: object) -> None:
    _session_id.set(None)


request_started.connect(_clear_request_tag, dispatch_uid="config.logging.clear_request_tag")


class AnsweredOutageFilter(logging.Filter):
    """Drops Django's "Service Unavailable" line for a request the outage middleware
    answered: that middleware has logged the outage, once a minute, with its cause."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        return not (getattr(record, "status_code", None) == 503 and hasattr(request, "outage"))


class ClientErrorFilter(logging.Filter):
    """Drops the traceback of Django's line for a request it refused with a 4xx (a page
    the user may not open, a host not allowed): the line says what was refused; the
    traceback only where Django raised it, dozens of lines a refusal."""

    def filter(self, record: logging.LogRecord) -> bool:
        if 400 <= (getattr(record, "status_code", None) or 0) < 500:
            record.exc_info = None
            record.exc_text = None
        return True


class SessionContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "session_id", None) is None:
            record.session_id = _session_id.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and value is not None:
                entry[key] = value if isinstance(value, (str, int, float, bool)) else str(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class PlainFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        session_id = getattr(record, "session_id", None)
        return f"{line} [session {session_id}]" if session_id else line
