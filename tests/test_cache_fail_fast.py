"""A cache (Redis) that hangs holds one request of a process for its timeout, not every
request: for CACHE_QUIET_SECONDS after a read or a connect timed out, the process's
requests that need the cache answer 503 at once, without trying it, and then one tries
again."""

import time
from collections.abc import Iterator

import pytest

from config import cache_backend
from tests.redis_databases import redis_url
from tests.silent_server import SilentServer

pytestmark = pytest.mark.django_db

# Redis' read timeout here: the first request waits it out.
SOCKET_TIMEOUT = 1


@pytest.fixture
def hanging_cache(settings, monkeypatch, api) -> Iterator[SilentServer]:  # type: ignore[no-untyped-def]
    # `api`: the key is made (and its cache entry dropped) while the cache answers.
    server = SilentServer()
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache_backend.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{server.port}/0",
            "OPTIONS": {"socket_timeout": SOCKET_TIMEOUT},
        }
    }
    monkeypatch.setattr(cache_backend, "_quiet_until", 0.0)
    yield server
    server.close()


def session_read(client) -> int:  # type: ignore[no-untyped-def]
    return client.get("/api/sessions/ff-1").status_code


def test_after_the_cache_timed_out_the_next_requests_answer_503_without_trying_it(
    api, hanging_cache: SilentServer
) -> None:
    first = session_read(api)
    tried = len(hanging_cache.accepted)
    later = [session_read(api) for _ in range(3)]

    assert first == 503
    assert later == [503, 503, 503]
    assert len(hanging_cache.accepted) == tried


def test_once_the_quiet_time_is_over_a_request_tries_the_cache_again(
    api, hanging_cache: SilentServer, monkeypatch
) -> None:
    monkeypatch.setattr(cache_backend, "CACHE_QUIET_SECONDS", 0.2)
    session_read(api)
    tried = len(hanging_cache.accepted)

    time.sleep(0.3)
    session_read(api)

    assert len(hanging_cache.accepted) > tried


def test_a_cache_that_answers_is_used_as_before(settings, make_client) -> None:  # type: ignore[no-untyped-def]
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache_backend.RedisCache",
            "LOCATION": redis_url("cache"),
        }
    }
    api = make_client("full")

    assert session_read(api) == 404


@pytest.mark.parametrize(
    ("location", "kind"),
    [
        ("redis://127.0.0.1:6379/0", "Connection"),
        ("rediss://127.0.0.1:6380/0", "SSLConnection"),
        ("unix:///run/redis.sock", "UnixDomainSocketConnection"),
    ],
)
def test_each_kind_of_redis_url_keeps_its_own_connection(location: str, kind: str) -> None:
    from django.core.cache.backends.redis import RedisCacheClient

    backend = cache_backend.RedisCache(location, {})
    client: RedisCacheClient = backend._cache
    pool = client._get_connection_pool(write=True)

    assert kind in [base.__name__ for base in pool.connection_class.__mro__]
