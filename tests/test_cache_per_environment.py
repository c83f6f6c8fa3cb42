"""Two environments on one Redis database (staging and production, say) keep their
caches apart: an API key staging has cached is not one production takes, nor do they
share rate-limit counters or login lockouts. The nodes of one environment share theirs."""

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.processes import ROOT

pytestmark = pytest.mark.integration

REDIS_URL = "redis://127.0.0.1:6379/13"

# What a process of an environment sees in the cache, after it set its own entry.
SCRIPT = """
import sys, django
django.setup()
from django.core.cache import cache
seen = cache.get("api-key:shared1")
if sys.argv[1] == "set":
    cache.set("api-key:shared1", sys.argv[2], 60)
print(seen)
"""


def node(database: str, queue: str, *args: str, prefix: str = "") -> str:
    env = {
        "CACHE_KEY_PREFIX": prefix,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "PATH": "/usr/bin:/bin",
        "REDIS_URL": REDIS_URL,
        "DATABASE_URL": database,
        "Q_CLUSTER_NAME": queue,
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def shared_redis() -> Iterator[None]:
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.flushdb()
    except redis.exceptions.ConnectionError:
        pytest.fail(f"these tests need Redis at {REDIS_URL}")
    yield
    client.flushdb()


@pytest.mark.parametrize(
    "staging",
    [
        ("mysql://root@127.0.0.1:3306/diagnosis_staging", "diagnosis"),
        ("mysql://root@db-staging:3306/diagnosis", "diagnosis"),
        ("mysql://root@127.0.0.1:3306/diagnosis", "diagnosis-staging"),
    ],
    ids=["another database", "another server", "another queue name"],
)
def test_an_environment_does_not_see_what_another_cached_in_the_same_redis_database(
    shared_redis: None, staging: tuple[str, str]
) -> None:
    production = ("mysql://root@127.0.0.1:3306/diagnosis", "diagnosis")
    node(*staging, "set", "staging's key")

    assert node(*production, "get") == "None"
    assert node(*staging, "get") == "staging's key"


def test_the_nodes_of_one_environment_share_their_cache(shared_redis: None) -> None:
    node("mysql://root@db.internal:3306/diagnosis", "diagnosis", "set", "production's key")

    assert node("mysql://root@db.internal:3306/diagnosis", "diagnosis", "get") == "production's key"


def test_nodes_that_reach_the_database_by_different_addresses_share_one_prefix_set_alike(
    shared_redis: None,
) -> None:
    node("mysql://root@10.0.0.5:3306/diagnosis", "diagnosis", "set", "its key", prefix="prod")

    shared = node("mysql://root@db.internal:3306/diagnosis", "diagnosis", "get", prefix="prod")
    assert shared == "its key"
