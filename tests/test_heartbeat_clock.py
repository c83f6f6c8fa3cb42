"""A worker's heartbeat is stamped and aged by the database's clock: a worker or a web node
whose own clock is off neither makes a live worker look gone (/readyz not ready, the
DiagnosisWorkerDown alert) nor a stopped one look alive."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from evaluation.models import WorkerHeartbeat
from evaluation.tasks import worker_heartbeat
from tests.metrics_samples import scrape, value

pytestmark = pytest.mark.django_db

AGE = "diagnosis_worker_heartbeat_age_seconds"
_real_now = timezone.now


@contextmanager
def clock_off_by(offset: timedelta) -> Iterator[None]:
    """This process's clock reads `offset` away from the true time."""
    with mock.patch("django.utils.timezone.now", lambda: _real_now() + offset):
        yield


def test_a_worker_whose_clock_is_three_minutes_behind_keeps_readyz_ready(client, settings):
    settings.READYZ_WORKER_MAX_AGE = 120
    with clock_off_by(-timedelta(minutes=3)):
        worker_heartbeat()

    response = client.get("/readyz")

    assert (response.status_code, response.json()["checks"]["worker"]) == (200, "ok")


def test_a_worker_whose_clock_is_three_minutes_behind_is_not_reported_down(client):
    with clock_off_by(-timedelta(minutes=3)):
        worker_heartbeat()

    assert value(scrape(client), AGE) < 60


def test_a_worker_whose_clock_is_ahead_does_not_beat_from_the_future(client):
    with clock_off_by(timedelta(minutes=5)):
        worker_heartbeat()

    beat_at = WorkerHeartbeat.objects.get().beat_at

    assert beat_at < _real_now() + timedelta(minutes=1)


def test_a_stopped_worker_reads_as_stopped_on_a_web_node_whose_clock_is_behind(client, settings):
    settings.READYZ_WORKER_MAX_AGE = 120
    WorkerHeartbeat.objects.create(host="w1", beat_at=_real_now() - timedelta(minutes=5))

    with clock_off_by(-timedelta(minutes=5)):
        response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["worker"].startswith("last heartbeat 30")


def test_a_stopped_worker_s_age_is_exported_whatever_the_web_node_s_clock(client):
    WorkerHeartbeat.objects.create(host="w1", beat_at=_real_now() - timedelta(minutes=5))

    with clock_off_by(-timedelta(minutes=5)):
        age = value(scrape(client), AGE)

    assert 290 <= age < 360
