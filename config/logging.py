"""Structured logs: one JSON object per line, with the session id on every line about a
session (bound per request or task, or passed as `extra={"session_id": ...}`) and the
request id (X-Request-ID, config.request_id) on every line written while a request is
handled."""

import contextlib
import contextvars
import json
import logging
import multiprocessing.process
import re
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import TracebackType
from typing import TextIO

from django.core.signals import request_finished, request_started
from django.http import HttpRequest

from config.shown_query import shown_request

_session_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("session_id", default=None)
_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
_caller: contextvars.ContextVar[str | None] = contextvars.ContextVar("caller", default=None)

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


# The rule a session id keeps, given by the app that owns sessions (diagnosis.apps: the
# API's lookup rule), which config cannot import; until it is given, no id is taggable.
_session_id_rule: Callable[[str], object] = lambda session_id: False  # noqa: E731


def set_session_id_rule(rule: Callable[[str], object]) -> None:
    """What `tag_request` takes for a session id: ids that `rule` finds true."""
    global _session_id_rule
    _session_id_rule = rule


def tag_request(session_id: str | None) -> None:
    """Name the session the current request is about, for the rest of the request.

    Unlike bind_session_id this outlives the view, so Django's own request log line
    (written after the view returns, e.g. "Conflict: ...") carries it too. Cleared when
    the request is finished and when the next one starts. Only a session id is named:
    a URL's segment that breaks the session-id rule (a line break, a space, an escape)
    is not, so that the line cannot be forged with it; the line about the request
    shows the path.
    """
    taggable = isinstance(session_id, str) and bool(_session_id_rule(session_id))
    _session_id.set(session_id if taggable else None)


def _clear_request_tag(**kwargs: object) -> None:
    _session_id.set(None)


request_started.connect(_clear_request_tag, dispatch_uid="config.logging.clear_request_tag")
request_finished.connect(_clear_request_tag, dispatch_uid="config.logging.clear_request_tag.finish")


def set_request_id(request_id: str) -> None:
    """Name the request being handled on every log line until it is finished, Django's own
    request line (written after the middleware returns) included."""
    _request_id.set(request_id)


def tag_caller(caller: str) -> None:
    """Name who makes the current request (an API key by its prefix, a feedback token) on
    every log line until it is finished: every key of a scope may write to any session,
    and the lines tell an auditor which one did. Never a secret."""
    _caller.set(caller)


def _clear_request_id(**kwargs: object) -> None:
    _request_id.set(None)
    _caller.set(None)


# Cleared when a request starts and when it is finished, so a line written between two
# requests of a thread names neither.
request_started.connect(_clear_request_id, dispatch_uid="config.logging.clear_request_id.start")
request_finished.connect(_clear_request_id, dispatch_uid="config.logging.clear_request_id.finish")


class AnsweredOutageFilter(logging.Filter):
    """Drops Django's "Service Unavailable" line for a request the outage middleware
    answered: that middleware has logged the outage, once a minute, with its cause."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        return not (getattr(record, "status_code", None) == 503 and hasattr(request, "outage"))


_DISALLOWED_HOST = "django.security.DisallowedHost"


# How much of a refusal's reason its log line shows.
REFUSAL_CHARS = 300


def note_refusal(request: object, reason: str) -> None:
    """Keep why `request` is refused (its answer's message), for Django's line about the
    4xx (ClientErrorFilter adds it as `reason`): an OTLP exporter prints only the status,
    so the operator reads why in the log. Never given a secret: the messages the service
    answers with name no key. A DRF Request notes it on the request Django logs."""
    request = getattr(request, "_request", request)
    shown = " ".join(reason.split())
    if len(shown) > REFUSAL_CHARS:
        shown = shown[: REFUSAL_CHARS - 1] + "…"
    request.refusal = shown  # type: ignore[attr-defined]


class ClientErrorFilter(logging.Filter):
    """Drops the traceback of Django's line for a request it refused with a 4xx (a page
    the user may not open, a host not allowed): the line says what was refused; the
    traceback only where Django raised it, dozens of lines a refusal.

    A Host header not in ALLOWED_HOSTS is the client's mistake (a scanner, a probe by
    IP), yet django.security logs it as an ERROR: it is written as a WARNING, so that it
    does not page whoever watches the errors, and not at all where WARNING is off.

    The line gets the reason the service answered with (`note_refusal`), when it noted
    one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if 400 <= (getattr(record, "status_code", None) or 0) < 500:
            record.exc_info = None
            record.exc_text = None
            reason = getattr(getattr(record, "request", None), "refusal", None)
            if reason:
                record.reason = reason
            if record.name == _DISALLOWED_HOST and record.levelno > logging.WARNING:
                if not logging.getLogger(record.name).isEnabledFor(logging.WARNING):
                    return False
                record.levelno = logging.WARNING
                record.levelname = logging.getLevelName(logging.WARNING)
        return True


class SessionContextFilter(logging.Filter):
    """Adds the session id, the request id and the caller bound for the current context (a
    value the call passed in `extra` wins); None, left out of the line, where there is
    none."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "session_id", None) is None:
            record.session_id = _session_id.get()
        if getattr(record, "request_id", None) is None:
            record.request_id = _request_id.get()
        if getattr(record, "caller", None) is None:
            record.caller = _caller.get()
        return True


def _extra_fields(record: logging.LogRecord) -> dict[str, object]:
    """What the logging call passed in `extra` (and the session id), None and private
    attributes (a leading underscore: a filter's note on the record) left out; a
    value JSON cannot write (a set, a date, a request) as its str()."""
    fields = {}
    for key, value in record.__dict__.items():
        if key not in _STANDARD and value is not None and not key.startswith("_"):
            fields[key] = _json_value(value)
    return fields


def _json_value(value: object) -> object:
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, HttpRequest):
        # Django's request lines pass the request: its query string's values are left out
        # but for the service's harmless parameters (a client may put a token there).
        return shown_request(value)
    if isinstance(value, (list, tuple, dict)):
        try:
            json.dumps(value)
        except (TypeError, ValueError, RecursionError):
            pass
        else:
            return value
    return str(value)


# Characters that are not shown as themselves (Unicode's Cc, Cf, Zl and Zp): control
# characters, ESC and its terminal sequences among them, line and paragraph separators,
# and format characters (bidirectional controls, zero-width characters, tags), which
# show a line other than the one written. Listed as Python's Unicode database has them
# (tests/test_log_escaping.py checks the list against it).
_UNSHOWN = re.compile(
    r"[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    r"\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    r"\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    r"\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


def _json_escape(match: re.Match[str]) -> str:
    return json.dumps(match.group())[1:-1]  # \n, \u001b, \u202e; a surrogate pair past the BMP


def escaped(text: str) -> str:
    """`text` with each character that is not shown as itself written as JSON escapes it
    (\\n, \\u001b, \\u202e); inside a JSON string, the same string."""
    return _UNSHOWN.sub(_json_escape, text)


class JsonFormatter(logging.Formatter):
    """One JSON object a line; a character not shown as itself (a control or a format
    character: a bidirectional override, too) as a \\u escape, not raw."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_extra_fields(record))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return escaped(json.dumps(entry, ensure_ascii=False))


class PlainFormatter(logging.Formatter):
    """The message, then the fields the JSON line has as ` key=value` (a value with a space,
    a quote, an `=`, a line break or any character not shown as itself in JSON's quotes,
    so the line stays one line and shows what was logged), then `[session …]`; a
    traceback after that line. In the message, such characters are escaped as JSON
    escapes them."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        # UTC with its offset, as the JSON line: local time changed in the middle of a
        # process (Django sets TZ to TIME_ZONE once the settings load), saying neither.
        return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = escaped(super().formatMessage(record))
        fields = _extra_fields(record)
        session_id = fields.pop("session_id", None)
        pairs = "".join(f" {key}={_plain_value(value)}" for key, value in fields.items())
        if session_id:
            return f"{line}{pairs} [session {_plain_value(session_id)}]"
        return f"{line}{pairs}"


def _plain_value(value: object) -> str:
    if isinstance(value, (list, tuple, dict)):
        return escaped(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    text = str(value)
    if text and not any(c.isspace() or c in "\"'=" for c in text) and not _UNSHOWN.search(text):
        return text
    return escaped(json.dumps(text, ensure_ascii=False))


# --- Exceptions nothing catches ---------------------------------------------------

_uncaught = logging.getLogger("uncaught")
_process_run = multiprocessing.process.BaseProcess.run


def console_handler(stream: TextIO, *, uncaught_as_lines: bool = False) -> logging.Handler:
    """LOGGING's console handler (config/logging_settings.py), as gunicorn's master and
    every Django process make it; with `uncaught_as_lines`, exceptions nothing catches are
    logged through it too."""
    if uncaught_as_lines:
        log_uncaught_exceptions()
    return logging.StreamHandler(stream)


def log_uncaught_exceptions() -> None:
    """Write an exception nothing catches (in the main thread, another thread, or a
    multiprocessing child such as django-q2's sentinel) as one CRITICAL line with its
    class, message and traceback, in place of Python's traceback on stderr. The process
    ends as it would have: status 1 (a thread's end leaves the process running).

    Python asks sys.excepthook and threading.excepthook; a multiprocessing child prints
    its traceback itself (multiprocessing.process.BaseProcess._bootstrap), so its run()
    is wrapped. Installing twice (logging set up again) changes nothing."""
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_uncaught_in_thread
    multiprocessing.process.BaseProcess.run = _run_logging_uncaught  # type: ignore[method-assign]


def _log_uncaught(
    exc_type: type[BaseException],
    exc: BaseException,
    tb: TracebackType | None,
    where: str = "",
) -> None:
    text = str(exc)
    message = (
        f"Uncaught {exc_type.__name__}{where}: {text}"
        if text
        else f"Uncaught {exc_type.__name__}{where}"
    )
    _uncaught.critical(message, exc_info=(exc_type, exc, tb))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:  # threading ignores it silently; so do we
        return
    name = args.thread.name if args.thread is not None else "?"
    exc = args.exc_value if args.exc_value is not None else args.exc_type()
    _log_uncaught(args.exc_type, exc, args.exc_traceback, f" in thread {name}")


def _run_logging_uncaught(self: multiprocessing.process.BaseProcess) -> None:
    try:
        _process_run(self)
    except Exception:
        # SystemExit and KeyboardInterrupt are left to multiprocessing, as they were.
        exc_type, exc, tb = sys.exc_info()
        _log_uncaught(exc_type, exc, tb, f" in process {self.name}")  # type: ignore[arg-type]
        sys.exit(1)  # multiprocessing's status for an exception, without its traceback
