"""Under gunicorn, with a cache (REDIS_URL) that takes connections and never answers,
/healthz answers without touching it, while /readyz and /metrics say the cache fails
within PROBE_DB_DEADLINE_SECONDS.

The cache's own read timeout here is far longer than the client waits, so a probe that
touched the cache would fail its test by the client's timeout, not by a clock."""

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.metrics_samples import parse, value
from tests.processes import child_env, gunicorn_with_config
from tests.silent_server import SilentServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Seconds: what a request that touched the hanging cache would wait for it, and what the
# client waits for any answer.
CACHE_SOCKET_TIMEOUT = 60
CLIENT_TIMEOUT = 15


@dataclass
class Served:
    base: str
    redis: SilentServer

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=CLIENT_TIMEOUT) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


@pytest.fixture
def hanging_redis() -> Iterator[SilentServer]:
    """A Redis that accepts every connection and never answers, in a thread of its own."""
    server = SilentServer()
    yield server
    server.close()


@pytest.fixture
def served(tmp_path: Path, hanging_redis: SilentServer) -> Iterator[Served]:
    url = f"redis://127.0.0.1:{hanging_redis.port}/0?socket_timeout={CACHE_SOCKET_TIMEOUT}"
    env = child_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        REDIS_URL=url,
        PROBE_DB_DEADLINE_SECONDS="1",
    )
    with gunicorn_with_config(env) as (base, _port):
        try:
            yield Served(base, hanging_redis)
        finally:
            # The reads it holds end first, or the worker waits for them to stop.
            hanging_redis.close()


def test_healthz_answers_while_the_cache_hangs_without_connecting_to_it(served: Served) -> None:
    status, body = served.get("/healthz")

    assert (status, json.loads(body)) == (200, {"status": "ok"})
    assert served.redis.accepted == []


def test_readyz_says_the_hanging_cache_failed_within_its_deadline(served: Served) -> None:
    status, body = served.get("/readyz")

    assert status == 503
    assert json.loads(body)["checks"]["cache"] == "timed out after 1 s"


def test_healthz_still_answers_after_readyz_left_a_cache_read_hanging(served: Served) -> None:
    served.get("/readyz")

    status, _body = served.get("/healthz")

    assert status == 200
    assert len(served.redis.accepted) == 1  # /readyz's read, and nothing of /healthz


def test_a_scrape_says_the_hanging_cache_is_down(served: Served) -> None:
    status, body = served.get("/metrics")

    assert status == 200
    assert value(parse(body.decode()), "diagnosis_cache_up") == 0
