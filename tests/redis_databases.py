"""The databases of the Redis at 127.0.0.1:6379 that tests empty and fill, one per use.

They are TEST_REDIS_DB_BASE (12 unless set) and the three after it. Two runs of the suite
at once on one Redis (CI runs SQLite and MariaDB side by side) each take their own base,
since a test empties its database before and after it."""

import os

HOST = "redis://127.0.0.1:6379"
# Each use's place after the base.
USES = {"cache": 0, "environments": 1, "rate_limits": 2, "scale_out": 3}


def redis_url(use: str) -> str:
    """The URL of the Redis database the tests of `use` have to themselves."""
    base = int(os.environ.get("TEST_REDIS_DB_BASE", "12"))
    return f"{HOST}/{base + USES[use]}"


def redis_db(use: str) -> str:
    """The number of that database, as `redis-cli -n` takes it."""
    return redis_url(use).rsplit("/", 1)[1]
