"""/healthz and /readyz, as a load balancer sees them."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone
from django_q.models import Schedule

from config import health
from evaluation.models import WorkerHeartbeat
from evaluation.tasks import worker_heartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget_cached_migration_state(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(health, "_migrations_applied", False)


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
        "checks": {"database": "ok", "migrations": "ok", "worker": "ok"},
    }


def test_readyz_is_not_ready_without_a_worker_heartbeat(client) -> None:
    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["worker"] == "no heartbeat yet"


def test_readyz_is_not_ready_when_the_last_heartbeat_is_stale(client, settings) -> None:
    settings.READYZ_WORKER_MAX_AGE = 180
    WorkerHeartbeat.objects.create(host="w1", beat_at=timezone.now() - timedelta(minutes=5))

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["worker"].startswith("last heartbeat 30")


def test_the_worker_check_can_be_left_out(client, settings) -> None:
    settings.READYZ_WORKER_MAX_AGE = 0

    response = client.get("/readyz")

    assert response.status_code == 200
    assert response.json()["checks"]["worker"] == "not checked"


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
