"""Two environments on one Redis database (staging and production, say) keep their
caches apart: an API key staging has cached is not one production takes, nor do they
share rate-limit counters or login lockouts. The nodes of one environment share theirs."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import ROOT
from tests.redis_databases import redis_url
from tests.test_settings import load_settings

pytestmark = pytest.mark.integration

REDIS_URL = redis_url("environments")

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


def node(database: str, queue: str, *args: str) -> str:
    env = {
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


@pytest.fixture
def production(tmp_path: Path) -> tuple[str, str]:
    return (f"sqlite:///{tmp_path}/production.sqlite3", "diagnosis")


@pytest.mark.parametrize("other", ["database", "queue name"])
def test_an_environment_does_not_see_what_another_cached_in_the_same_redis_database(
    shared_redis: None, production: tuple[str, str], tmp_path: Path, other: str
) -> None:
    if other == "database":
        staging = (f"sqlite:///{tmp_path}/staging.sqlite3", "diagnosis")
    else:
        staging = (production[0], "diagnosis-staging")
    node(*staging, "set", "staging's key")

    assert node(*production, "get") == "None"
    assert node(*staging, "get") == "staging's key"


def test_the_nodes_of_one_environment_share_their_cache(
    shared_redis: None, production: tuple[str, str]
) -> None:
    node(*production, "set", "production's key")

    assert node(*production, "get") == "production's key"


def prefix(monkeypatch: pytest.MonkeyPatch, database_url: str, **env: str) -> str:
    loaded = load_settings(
        monkeypatch, DEBUG="1", REDIS_URL=REDIS_URL, DATABASE_URL=database_url, **env
    )
    return loaded["CACHES"]["default"]["KEY_PREFIX"]


def test_databases_of_one_name_on_two_servers_are_two_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    staging = prefix(monkeypatch, "mysql://root@db-staging:3306/diagnosis")
    production = prefix(monkeypatch, "mysql://root@db-prod:3306/diagnosis")

    assert staging != production


def test_nodes_that_reach_the_database_by_different_addresses_share_the_prefix_set_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    by_address = prefix(
        monkeypatch, "mysql://root@10.0.0.5:3306/diagnosis", CACHE_KEY_PREFIX="prod"
    )
    by_name = prefix(
        monkeypatch, "mysql://root@db.internal:3306/diagnosis", CACHE_KEY_PREFIX="prod"
    )

    assert by_address == by_name == "prod"
