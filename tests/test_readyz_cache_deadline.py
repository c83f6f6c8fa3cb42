"""/readyz answers within PROBE_DB_DEADLINE_SECONDS when the cache hangs (a Redis that takes
the connection and never answers): not ready, the cache named, the database still checked."""

from collections.abc import Iterator

import pytest

from config import deadline, health
from evaluation.tasks import worker_heartbeat
from tests.silent_server import SilentServer

pytestmark = pytest.mark.django_db

# Redis' own read timeout in these tests: longer than any probe waits, so only the deadline
# can answer while the server is silent, and short enough that a probe that waits it out
# fails its test rather than hanging the suite.
CLIENT_TIMEOUT = 20


@pytest.fixture
def silent_redis(settings) -> Iterator[SilentServer]:  # type: ignore[no-untyped-def]
    server = SilentServer()
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{server.port}/0",
            "OPTIONS": {"socket_timeout": CLIENT_TIMEOUT},
        }
    }
    settings.PROBE_DB_DEADLINE_SECONDS = 1
    yield server
    server.close()
    # The next test starts with the cache's probe thread free.
    if deadline.CACHE.pending is not None:
        deadline.CACHE.pending.exception()


@pytest.fixture(autouse=True)
def _fresh_probe_state(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(health, "_failing", frozenset())


def test_readyz_whose_cache_hangs_answers_not_ready_naming_the_cache(
    client, silent_redis: SilentServer
) -> None:
    worker_heartbeat()

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json() == {
        "status": "not ready",
        "checks": {
            "database": "ok",
            "migrations": "ok",
            "worker": "ok",
            "cache": "timed out after 1 s",
        },
    }


def test_while_the_earlier_cache_read_still_hangs_the_cache_says_so_and_the_database_is_read(
    client, silent_redis: SilentServer
) -> None:
    worker_heartbeat()
    client.get("/readyz")

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"] == {
        "database": "ok",
        "migrations": "ok",
        "worker": "ok",
        "cache": "still waiting for an earlier check",
    }
