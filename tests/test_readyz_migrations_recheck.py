"""/readyz's migrations check after a rollback: a process that once found every migration
applied looks again within MIGRATIONS_RECHECK_SECONDS, with one query on django_migrations,
instead of remembering "ok" for its whole life."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config import health
from tests.migrate_to import migrate_to

pytestmark = pytest.mark.django_db(transaction=True)

ROLLED_BACK_TO = ("evaluation", "0003_opinion_daily_budget")


@pytest.fixture(autouse=True)
def _a_process_not_probed_yet(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(health, "_migrations_applied", False)
    monkeypatch.setattr(health, "_migrations_checked_at", 0.0)
    monkeypatch.setattr(health, "_failing", frozenset())


@pytest.fixture
def rolled_back():  # type: ignore[no-untyped-def]
    def roll_back() -> None:
        migrate_to(ROLLED_BACK_TO)

    yield roll_back
    migrate_to()


def migrations_check(client) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    response = client.get("/readyz")
    return response.status_code, response.json()["checks"]["migrations"]


def test_a_rollback_after_a_ready_probe_makes_the_node_not_ready_at_the_next_recheck(
    client, monkeypatch, rolled_back
) -> None:
    monkeypatch.setattr(health, "MIGRATIONS_RECHECK_SECONDS", 0.0)
    assert migrations_check(client) == (200, "ok")

    rolled_back()

    assert migrations_check(client) == (503, "1 unapplied")


def test_the_node_is_ready_again_once_the_migration_is_applied_again(
    client, monkeypatch, rolled_back
) -> None:
    monkeypatch.setattr(health, "MIGRATIONS_RECHECK_SECONDS", 0.0)
    rolled_back()
    assert migrations_check(client) == (503, "1 unapplied")

    migrate_to()

    assert migrations_check(client) == (200, "ok")


def test_a_recheck_is_one_query_on_django_migrations(monkeypatch) -> None:
    assert health._migrations() == "ok"
    monkeypatch.setattr(health, "MIGRATIONS_RECHECK_SECONDS", 0.0)

    with CaptureQueriesContext(connection) as queries:
        assert health._migrations() == "ok"

    assert len(queries) <= 1
    assert all("django_migrations" in query["sql"] for query in queries)


def test_within_the_interval_the_migrations_are_not_read_again(monkeypatch) -> None:
    assert health._migrations() == "ok"
    monkeypatch.setattr(health, "MIGRATIONS_RECHECK_SECONDS", 3600.0)

    with CaptureQueriesContext(connection) as queries:
        assert health._migrations() == "ok"

    assert len(queries) == 0
