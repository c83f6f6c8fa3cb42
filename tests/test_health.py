"""/healthz and /readyz, as a load balancer sees them."""

import ast
import logging
from datetime import timedelta

import pytest
from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader
from django.urls import resolve
from django.utils import timezone
from django_q.models import Schedule

from config import health
from evaluation.models import WorkerHeartbeat
from evaluation.tasks import worker_heartbeat
from tests.processes import ROOT

pytestmark = pytest.mark.django_db

UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture(autouse=True)
def _forget_cached_migration_state(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(health, "_migrations_applied", False)
    # Each test starts as a process that has not been probed yet.
    monkeypatch.setattr(health, "_failing", frozenset(), raising=False)


def test_healthz_answers_any_host_over_plain_http_without_touching_the_database(
    client, settings, django_assert_num_queries
) -> None:
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["diagnosis.example.com"]

    with django_assert_num_queries(0):
        response = client.get("/healthz", HTTP_HOST="10.0.3.17:8000")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ready_with_the_database_migrations_and_a_recent_worker(client, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    worker_heartbeat()

    response = client.get("/readyz", HTTP_HOST="10.0.3.17")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "checks": {"database": "ok", "migrations": "ok", "worker": "ok", "cache": "ok"},
    }


def test_readyz_stays_ready_without_a_worker_heartbeat_and_says_there_is_none(
    client, settings
) -> None:
    # The API works without the task worker: failing readiness would take every web node
    # out of the load balancer. A dead worker is an alert's business (/metrics).
    settings.READYZ_WORKER_MAX_AGE = 0

    response = client.get("/readyz")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "checks": {
            "database": "ok",
            "migrations": "ok",
            "worker": "no heartbeat yet",
            "cache": "ok",
        },
    }


def test_readyz_stays_ready_with_a_stale_heartbeat_and_says_how_old_it_is(client, settings) -> None:
    settings.READYZ_WORKER_MAX_AGE = 0
    WorkerHeartbeat.objects.create(host="w1", beat_at=timezone.now() - timedelta(minutes=5))

    response = client.get("/readyz")

    assert response.status_code == 200
    assert response.json()["checks"]["worker"].startswith("last heartbeat 30")


def test_readyz_says_ok_for_a_worker_that_sent_its_heartbeat_lately(client, settings) -> None:
    settings.READYZ_WORKER_MAX_AGE = 0
    WorkerHeartbeat.objects.create(host="w1", beat_at=timezone.now() - timedelta(minutes=2))

    response = client.get("/readyz")

    assert (response.status_code, response.json()["checks"]["worker"]) == (200, "ok")


def test_the_worker_heartbeat_is_informational_unless_the_operator_sets_a_max_age(
    monkeypatch,
) -> None:
    from tests.test_settings import load_settings

    monkeypatch.delenv("READYZ_WORKER_MAX_AGE", raising=False)

    assert load_settings(monkeypatch, DEBUG="1")["READYZ_WORKER_MAX_AGE"] == 0


def test_with_a_worker_max_age_readyz_is_not_ready_without_a_heartbeat(client, settings) -> None:
    settings.READYZ_WORKER_MAX_AGE = 180

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["worker"] == "no heartbeat yet"


def test_with_a_worker_max_age_readyz_is_not_ready_when_the_heartbeat_is_older(
    client, settings
) -> None:
    settings.READYZ_WORKER_MAX_AGE = 180
    WorkerHeartbeat.objects.create(host="w1", beat_at=timezone.now() - timedelta(minutes=5))

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["worker"].startswith("last heartbeat 30")


def test_a_missing_heartbeat_logs_no_readiness_warning_while_it_is_informational(
    client, settings, caplog
) -> None:
    settings.READYZ_WORKER_MAX_AGE = 0
    caplog.set_level(logging.INFO)

    for _probe in range(3):
        assert client.get("/readyz").status_code == 200

    assert not [r for r in caplog.records if r.getMessage().startswith("readiness")]


@pytest.mark.django_db(transaction=True)
def test_readyz_is_not_ready_while_a_migration_is_unapplied(client) -> None:
    worker_heartbeat()
    # The app's latest migration: an unrecorded one below an applied one is not planned.
    (latest,) = [
        name for app, name in MigrationLoader(connection).graph.leaf_nodes() if app == "evaluation"
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM django_migrations WHERE app = 'evaluation' AND name = %s", [latest]
        )
    try:
        response = client.get("/readyz")
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO django_migrations (app, name, applied) VALUES ('evaluation', %s, %s)",
                [latest, timezone.now()],
            )

    assert response.status_code == 503
    assert response.json()["checks"]["migrations"] == "1 unapplied"


def test_the_heartbeat_is_scheduled_every_minute() -> None:
    schedule = Schedule.objects.get(name="worker-heartbeat")

    assert (schedule.func, schedule.schedule_type, schedule.minutes, schedule.repeats) == (
        "evaluation.tasks.worker_heartbeat",
        Schedule.MINUTES,
        1,
        -1,
    )


def test_an_unreachable_database_makes_readyz_not_ready_and_says_so(client, monkeypatch) -> None:
    def unreachable() -> str:
        raise DatabaseError("server has gone away")

    monkeypatch.setattr(health, "database_check", unreachable)

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"] == {
        "database": "unreachable",
        "migrations": "unknown",
        "worker": "unknown",
        "cache": "ok",
    }


def test_an_unreachable_cache_makes_readyz_not_ready_and_says_so(client, settings) -> None:
    worker_heartbeat()
    # The API keys and rate limits live in the shared cache: without it no API call works.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": UNREACHABLE_REDIS,
        }
    }

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json() == {
        "status": "not ready",
        "checks": {"database": "ok", "migrations": "ok", "worker": "ok", "cache": "unreachable"},
    }


def test_a_failing_readyz_is_logged_once_as_a_warning_not_as_an_error_per_probe(
    client, settings, caplog
) -> None:
    settings.READYZ_WORKER_MAX_AGE = 180
    caplog.set_level(logging.INFO)

    for _probe in range(5):
        assert client.get("/readyz").status_code == 503  # no worker yet
    worker_heartbeat()
    for _probe in range(3):
        assert client.get("/readyz").status_code == 200

    about_readiness = [
        (r.name, r.levelname, r.getMessage())
        for r in caplog.records
        if r.name == "django.request" or r.getMessage().startswith("readiness")
    ]
    assert about_readiness == [
        ("config.health", "WARNING", "readiness: not ready: worker: no heartbeat yet"),
        ("config.health", "INFO", "readiness: ready again"),
    ]


def test_the_probes_are_routes_of_the_project(client) -> None:
    assert resolve("/healthz").url_name == "healthz"
    assert resolve("/readyz").url_name == "readyz"


def test_the_lowest_layer_imports_no_app_for_its_probes() -> None:
    source = (ROOT / "config" / "health.py").read_text(encoding="utf-8")
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]

    assert imported, "config/health.py imports nothing? the walk is broken"
    assert not [
        name
        for name in imported
        if name and name.split(".")[0] in {"diagnosis", "evaluation", "caselibrary", "feedback"}
    ]
