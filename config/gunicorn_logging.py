"""gunicorn's own lines in the service's format (config/gunicorn.conf.py reads this).

The error log (`gunicorn.error`: "Booting worker", "WORKER TIMEOUT", a worker's traceback)
goes to the root logger's handler, which Django's LOGGING makes the service's: one JSON
object per line on stderr (LOG_FORMAT), as the application's lines. The access log is one
line per request on stdout, with its fields (method, path, status, duration, bytes,
request id, client address) as the JSON line's own, or ` key=value` with LOG_FORMAT=plain.
GUNICORN_ACCESS_LOG=0 turns it off.

The query string is logged with the values of the service's own harmless parameters
(`limit`, `status`, …) and every other value replaced: a client may put a token, a key or
a signature there (the service reads them from headers only), and a log is read by more
people than the service's secrets are.

No Django import at module level: gunicorn reads this before Django is set up.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from gunicorn.glogging import Logger

from config.logging_settings import logging_settings
from config.shown_query import shown_query

ACCESS_LOG_VARIABLE = "GUNICORN_ACCESS_LOG"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

REQUEST_ID_HEADER = "x-request-id"


def access_log_wanted() -> bool | None:
    """GUNICORN_ACCESS_LOG as a boolean (on when unset or empty); None when it is neither
    (on_starting refuses it, naming the variable)."""
    value = os.environ.get(ACCESS_LOG_VARIABLE, "").strip().lower()
    if value == "" or value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def access_log_problem() -> str | None:
    """The configuration error GUNICORN_ACCESS_LOG makes, if it makes one."""
    if access_log_wanted() is not None:
        return None
    shown = os.environ.get(ACCESS_LOG_VARIABLE, "").strip()[:60]
    accepted = ", ".join(sorted(_TRUE | _FALSE))
    return f"{ACCESS_LOG_VARIABLE} must be one of {accepted}, got {shown!r}"


def _log_format() -> str:
    # As config/settings.py reads LOG_FORMAT; a value it refuses stops gunicorn in
    # on_starting, so the default stands in for it until then.
    value = os.environ.get("LOG_FORMAT", "").strip().lower()
    if value in ("json", "plain"):
        return value
    debug = os.environ.get("DEBUG", "").strip().lower() in _TRUE
    return "plain" if debug else "json"


def gunicorn_logconfig() -> dict[str, Any]:
    """gunicorn's `logconfig_dict`: what stands until Django's LOGGING is applied (the
    master's on_starting, each worker as it loads the application), and the access log's
    handler, which Django's LOGGING leaves alone."""
    log_format = _log_format()
    # The service's own formatters and console handler (config/logging_settings.py), with
    # only the filter that reads nothing of Django's requests.
    service = logging_settings(level="INFO", log_format=log_format, queue_level="INFO")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"session": service["filters"]["session"]},
        "formatters": service["formatters"],
        "handlers": {
            "console": {**service["handlers"]["console"], "filters": ["session"]},
            "access": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
                "formatter": log_format,
            },
        },
        "root": {"handlers": ["console"], "level": "INFO"},
        "loggers": {
            # No handler of its own and no level: the root's handler (the service's, once
            # Django is set up) writes its lines, at gunicorn's --log-level.
            "gunicorn.error": {"handlers": [], "propagate": True},
            "gunicorn.access": {"handlers": ["access"], "propagate": False, "level": "INFO"},
        },
    }


class AccessLogger(Logger):
    """gunicorn's logger with a structured access line (or none: GUNICORN_ACCESS_LOG=0)."""

    def _compute_access_log_enabled(self) -> bool:
        return access_log_wanted() is not False

    def access(self, resp: Any, req: Any, environ: dict, request_time: timedelta) -> None:
        if not self.access_log_enabled:
            return
        try:
            args, fields = access_line(resp, environ, request_time)
            self.access_log.info("%s %s %s", *args, extra=fields)
        except Exception:  # a line that cannot be written must not fail the request
            self.exception("access log line not written")


def access_line(
    resp: Any, environ: dict, request_time: timedelta
) -> tuple[tuple[str, str, Any], dict[str, Any]]:
    """The access line: its message's arguments (method, path, status) and its fields."""
    method = environ.get("REQUEST_METHOD", "-")
    raw_path, _, raw_query = environ.get("RAW_URI", environ.get("PATH_INFO", "")).partition("?")
    status = resp.status
    if isinstance(status, str):
        status = status.split(None, 1)[0]
    status = int(status) if str(status).isdigit() else status
    fields: dict[str, Any] = {
        "method": method,
        "path": raw_path,
        "query": shown_query(raw_query) or None,
        "status": status,
        "duration_ms": round(request_time.total_seconds() * 1000, 1),
        "bytes": getattr(resp, "sent", None),
        "request_id": _response_header(resp, REQUEST_ID_HEADER),
        "remote_addr": environ.get("REMOTE_ADDR"),
    }
    return (method, raw_path, status), fields


def _response_header(resp: Any, name: str) -> str | None:
    for key, value in getattr(resp, "headers", None) or ():
        if key.lower() == name:
            return value
    return None
