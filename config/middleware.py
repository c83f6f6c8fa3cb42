"""Guards in front of every API view."""

import contextlib
import logging
import sys
from collections.abc import Callable, Collection, Iterator
from typing import Any

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.base import BaseCache
from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.utils.html import format_html
from django.utils.translation import gettext as _

from config.api import MESSAGES, error_body
from config.failure_log import RepeatedFailures
from config.logging import note_refusal, tag_request

logger = logging.getLogger(__name__)

Handler = Callable[[HttpRequest], HttpResponse]

# Each endpoint may answer in its own error shape (the feedback contract has one).
_ERROR_SHAPES: dict[str, Callable[[str, str], dict]] = {}


def register_error_shape(path: str, shape: Callable[[str, str], dict]) -> None:
    """Let an endpoint at `path` give middleware errors its own body shape."""
    _ERROR_SHAPES[path] = shape


def api_error(request: HttpRequest, status: int, code: str, message: str) -> JsonResponse:
    """An /api/ error answered outside DRF, in the body shape of the endpoint at its path."""
    shape = _ERROR_SHAPES.get(request.path, error_body)
    note_refusal(request, f"{code}: {message}")
    return JsonResponse(
        shape(code, message), status=status, json_dumps_params={"ensure_ascii": False}
    )


class SessionLogTagMiddleware:
    """Tag log lines of a request whose URL names a session (…/sessions/{sessionId}/…)."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: object, args: tuple, kwargs: dict) -> None:
        if "sessionId" in kwargs:
            tag_request(kwargs["sessionId"])


class RequestBodyLimitMiddleware:
    """413 for an API request whose declared body is over API_MAX_BODY_BYTES, answered
    before the body is read (config.request_body then reads the rest and throws it away,
    bounded, so that a client still sending it gets this answer, not a reset)."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return api_error(
                    request,
                    413,
                    "payload_too_large",
                    f"{MESSAGES['payload_too_large']}（上限 {settings.API_MAX_BODY_BYTES} 字节）",
                )
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    """A database or cache that cannot be reached is a 503 the client can retry, not a 500.

    Database: connection loss, timeouts and lock waits (OperationalError/InterfaceError);
    the connection is dropped so the next request reconnects (CONN_HEALTH_CHECKS).
    Cache (REDIS_URL): every API request reads it (the API-key cache, the rate limits),
    so a Redis that refuses or times out is an outage of the API like the database's.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not _outage_log.failing():
            return self.get_response(request)
        # An outage is logged: it is over when the database or the cache has answered a
        # request again, not at any answer (an empty OTLP export whose key is cached
        # answers 200 without a query), so what this request used is watched.
        answered = _Answered()
        with connections["default"].execute_wrapper(answered.query), _cache_watched(answered):
            response = self.get_response(request)
        # Not after a 5xx: a request may fail after its first queries succeeded (a lock
        # wait is an OperationalError too).
        if response.status_code < 500 and answered.kinds:
            _outage_log.over(answered.kinds)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        what = outage_kind(exception)
        if what is None:
            return None
        outage_answered(request, what, exception)
        if request.path.startswith("/api/"):
            code = "service_unavailable"
            response = api_error(request, 503, code, MESSAGES[code])
        else:
            response = HttpResponse(_unavailable_page(what), status=503)
        response["Retry-After"] = "5"
        return response


def _unavailable_page(what: str) -> str:
    """The 503 page of an admin (or other non-API) request, in the language active for it
    (the operator's choice, else LANGUAGE_CODE: config.language); built here, without a
    template, because the outage may be the database's."""
    title = _("Service unavailable")
    if what == "database":
        message = _("The database is unavailable; retry later.")
    else:
        message = _("The cache is unavailable; retry later.")
    return format_html(
        '<!DOCTYPE html>\n<html lang="{}">\n<head><meta charset="utf-8"><title>{}</title></head>\n'
        "<body><h1>{}</h1><p>{}</p></body>\n</html>\n",
        translation.get_language(),
        title,
        title,
        message,
    )


def outage_kind(exception: BaseException) -> str | None:
    """ "database" or "cache" when `exception` says that one cannot be reached (connection
    loss, timeouts, lock waits; a Redis that refuses or times out), else None."""
    if isinstance(exception, (OperationalError, InterfaceError)):
        return "database"
    if is_cache_outage(exception):
        return "cache"
    return None


# MariaDB/MySQL's lock wait timeout and deadlock; SQLite's busy timeout says "locked".
_LOCK_ERRORS = {1205, 1213}


def _is_lock_wait(exception: BaseException) -> bool:
    """Whether `exception` (a database outage by outage_kind) is a statement that gave up
    waiting for a lock, on a database that answers."""
    if not isinstance(exception, OperationalError):
        return False
    code = exception.args[0] if exception.args else None
    return code in _LOCK_ERRORS or "database is locked" in str(exception)


def outage_answered(request: HttpRequest, what: str, exception: BaseException) -> None:
    """Log that `request` is answered 503 because the `what` ("database", "cache") cannot
    be reached, once a minute per process (_OutageLog), and mark the request so that
    Django's own "Service Unavailable" line for it, which says nothing more, is dropped
    (config.logging.AnsweredOutageFilter). A broken database connection is dropped, so
    the next request reconnects. A lock wait is no outage: the database answered that a
    row another transaction held was waited for until DB_LOCK_WAIT_TIMEOUT (or that a
    deadlock was broken), and the client may retry; it is logged as such, each time."""
    request.outage = what  # type: ignore[attr-defined]
    if _is_lock_wait(exception):
        logger.warning("database lock wait: %s", _describe(exception))
        return
    if what == "database":
        _close_broken_connections()
    # redis-py's message names the host and port, never the URL's password.
    _outage_log.failed(what, _describe(exception))


class _Answered:
    """What answered one request: "database" once a query of it returned, "cache" once a
    call of the default cache did."""

    def __init__(self) -> None:
        self.kinds: set[str] = set()

    def query(self, execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
        """An execute wrapper (Django's hook around every query of a connection)."""
        result = execute(sql, params, many, context)
        self.kinds.add("database")
        return result


# The calls of a cache backend that go to the cache (BaseCache's).
_CACHE_CALLS = frozenset(
    {"add", "get", "set", "touch", "delete", "get_many", "get_or_set", "has_key", "incr", "decr"}
    | {"set_many", "delete_many", "clear", "incr_version", "decr_version"}
)


class _WatchedCache:
    """The default cache, seen through for one request: a call that goes to the cache and
    returns marks it answered. Django has no hook around cache calls, as it has around
    queries; everything reads the cache through `caches` (django.core.cache.cache and
    DRF's throttles are proxies to it), so standing in there sees every call."""

    def __init__(self, backend: BaseCache, answered: _Answered) -> None:
        self._backend = backend
        self._answered = answered

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._backend, name)
        if name not in _CACHE_CALLS:
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            result = found(*args, **kwargs)
            self._answered.kinds.add("cache")
            return result

        return call


@contextlib.contextmanager
def _cache_watched(answered: _Answered) -> Iterator[None]:
    """The default cache of this thread is a _WatchedCache inside the block."""
    backend = caches[DEFAULT_CACHE_ALIAS]
    caches[DEFAULT_CACHE_ALIAS] = _WatchedCache(backend, answered)
    try:
        yield
    finally:
        caches[DEFAULT_CACHE_ALIAS] = backend


class _OutageLog:
    """An outage fails every request: one ERROR line per kind (database, cache) and
    OUTAGE_LOG_SECONDS per process, saying how many more requests were answered 503 since
    the last, instead of a line per request (thousands a minute under load); and, at the
    first request the database (or the cache) answers after it, one line saying it is
    over and how many 503s were not counted yet."""

    def __init__(self) -> None:
        self._failures = RepeatedFailures()

    def failed(self, what: str, reason: str) -> None:
        more = self._failures.failed(what, every=OUTAGE_LOG_SECONDS)
        if more is None:
            return
        if more:
            logger.error(
                "%s unavailable: %s (%d more requests answered 503 since the last line)",
                what,
                reason,
                more,
            )
        else:
            logger.error("%s unavailable: %s", what, reason)

    def failing(self) -> frozenset[str]:
        return self._failures.failing()

    def over(self, kinds: Collection[str]) -> None:
        for what, more in self._failures.over(kinds).items():
            logger.warning(
                "%s available again (%d more requests answered 503 since the last line)",
                what,
                more,
            )


OUTAGE_LOG_SECONDS = 60.0
_outage_log = _OutageLog()


def is_cache_outage(exception: BaseException) -> bool:
    """A Redis (the cache, or the broker) that refuses or times out, or that answers but
    cannot take a write (is_write_refused). redis-py is imported only where the cache or
    the broker is Redis: it loads OpenTelemetry and cryptography, 10 MB a process
    (export's peak RSS 124 -> 133 MB when this module imported it), and an exception of it
    can only come from where it is loaded."""
    redis = sys.modules.get("redis")
    if redis is None:
        return False
    return isinstance(exception, (redis.ConnectionError, redis.TimeoutError)) or (
        is_write_refused(exception)
    )


# How Redis refuses a write while it answers reads: full under `maxmemory` with the
# noeviction policy (OOM), a replica after a failover (READONLY), a failed snapshot with
# stop-writes-on-bgsave-error (MISCONF). redis-py names the first two only.
_WRITE_REFUSALS = ("OOM ", "READONLY ", "MISCONF ")


def is_write_refused(exception: BaseException) -> bool:
    """A Redis that refused a write, for one of the reasons above."""
    redis = sys.modules.get("redis")
    if redis is None or not isinstance(exception, redis.ResponseError):
        return False
    named = (redis.exceptions.OutOfMemoryError, redis.exceptions.ReadOnlyError)
    return isinstance(exception, named) or str(exception).startswith(_WRITE_REFUSALS)


def _describe(exception: Exception) -> str:
    # The driver's (code, message) only: no query text, which may carry user data.
    args = getattr(exception, "args", ())
    return " ".join(str(a) for a in args[:2]) or exception.__class__.__name__


def _close_broken_connections() -> None:
    for connection in connections.all(initialized_only=True):
        try:
            connection.close_if_unusable_or_obsolete()
        except DatabaseError as exc:  # closing a dead connection may fail too
            logger.warning("could not close a broken connection: %s", _describe(exc))
