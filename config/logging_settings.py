"""The LOGGING setting: what each logger lets through and how lines are written (the
formatters and filters are in config/logging.py). A module of its own, without Django
imports, so that settings can import it."""

from typing import Any


def logging_settings(*, level: str, log_format: str, queue_level: str) -> dict[str, Any]:
    """`level`: the root's and Django's; `log_format`: "json" or "plain"; `queue_level`:
    django-q2's own logger's."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "session": {"()": "config.logging.SessionContextFilter"},
            "answered_outage": {"()": "config.logging.AnsweredOutageFilter"},
            "client_error": {"()": "config.logging.ClientErrorFilter"},
            "queue": {"()": "config.queue_logging.QueueLogFilter"},
        },
        "formatters": {
            "json": {"()": "config.logging.JsonFormatter"},
            "plain": {
                "()": "config.logging.PlainFormatter",
                "format": "%(asctime)s %(levelname)s %(name)s %(message)s",
            },
        },
        "handlers": {
            "console": {
                "()": "config.logging.console_handler",
                # JSON lines only: an exception nothing catches is one more line, not
                # Python's traceback on stderr (config.logging.log_uncaught_exceptions).
                "uncaught_as_lines": log_format == "json",
                # stderr (StreamHandler's default), which a service manager collects as it
                # does stdout: a command's stdout is its output (a key, an export), which
                # a log line must never join.
                "stream": "ext://sys.stderr",
                "formatter": log_format,
                # A request refused with a 4xx (django.request, django.security.*) is one
                # line, without the traceback of where Django raised the refusal.
                "filters": ["session", "client_error"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Named to drop Django's default handler (every line twice) and INFO level.
            "django": {"level": level},
            # SQL is never logged: it can carry user data.
            "django.db.backends": {"level": "WARNING"},
            "django.request": {"filters": ["answered_outage"]},
            # django-q2 logs every enqueue and every processed task at INFO: thousands of lines
            # a minute under load. Failures are ERRORs and still get through: in English, and
            # an outage's line repeated at every poll once a minute (config/queue_logging.py).
            "django-q": {"level": queue_level, "filters": ["queue"]},
            # The opinion provider's HTTP client logs each request at INFO/DEBUG: noise, and
            # never a place for request headers (the API key).
            "openai": {"level": "WARNING"},
            "httpx": {"level": "WARNING"},
            "httpx2": {"level": "WARNING"},
            "httpcore": {"level": "WARNING"},
        },
    }
