"""The cache on Redis: Django's RedisCache, failing fast while Redis hangs.

A Redis that hangs (the connection up, no answer) holds each request that reads the cache
for the client's timeout (5 s by default, config/settings.py) before it answers 503: with
sync workers, a few such requests take every worker of a node, and the requests that do
not need the cache (`/healthz`, the console) wait behind them. So once a read or a
connect of this process timed out, its next commands fail at once for CACHE_QUIET_SECONDS
(the 503's Retry-After says 5 too), raising the ConnectionError a Redis that refuses
connections raises, which the outage middleware answers the same way; then one tries
Redis again. A refused connection fails at once already and quiets nothing.

Chosen in CACHES by BACKEND, with the URL's own kind of connection (redis://, rediss://,
unix://). Per process, as the connections are.
"""

from typing import Any

from django.core.cache.backends import redis as django_redis
from redis.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from config.quiet_window import is_quiet, quiet_until

CACHE_QUIET_SECONDS = 5.0
# time.monotonic() until which this process does not try the cache (config/quiet_window.py).
_quiet_until = 0.0


def _timed_out() -> None:
    global _quiet_until
    _quiet_until = quiet_until(CACHE_QUIET_SECONDS)


def _refused_while_quiet() -> None:
    if is_quiet(_quiet_until):
        raise RedisConnectionError(
            f"the cache timed out less than {CACHE_QUIET_SECONDS:g} s ago: not tried"
        )


class _FailFast:
    """A connection that is neither made nor used while the process's cache is quiet."""

    def connect(self) -> None:
        _refused_while_quiet()
        try:
            super().connect()  # type: ignore[misc]
        except RedisTimeoutError:  # the connect itself: a Redis that drops packets
            _timed_out()
            raise

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        _refused_while_quiet()
        try:
            super().send_packed_command(command, check_health)  # type: ignore[misc]
        except RedisTimeoutError:
            _timed_out()
            raise

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)  # type: ignore[misc]
        except RedisTimeoutError:
            _timed_out()
            raise


class FailFastConnection(_FailFast, Connection):
    pass


class FailFastSSLConnection(_FailFast, SSLConnection):
    pass


class FailFastUnixConnection(_FailFast, UnixDomainSocketConnection):
    pass


_BY_SCHEME = {"rediss": FailFastSSLConnection, "unix": FailFastUnixConnection}


class RedisCache(django_redis.RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        scheme = self._servers[0].partition("://")[0]
        connection_class = _BY_SCHEME.get(scheme, FailFastConnection)
        # A copy: the settings' OPTIONS stay as written.
        self._options = {"connection_class": connection_class, **self._options}
