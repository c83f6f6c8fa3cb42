"""/metrics says how long ago a task-queue worker last beat, for the alert that pages when
none does (/readyz only reports it)."""

import datetime

import pytest
from django.utils import timezone

from evaluation.models import WorkerHeartbeat
from tests.metrics_samples import scrape, value

pytestmark = pytest.mark.django_db

AGE = "diagnosis_worker_heartbeat_age_seconds"


def test_the_newest_heartbeat_s_age_is_exported() -> None:
    now = timezone.now()
    WorkerHeartbeat.objects.create(host="worker-a", beat_at=now - datetime.timedelta(minutes=7))
    WorkerHeartbeat.objects.create(host="worker-b", beat_at=now - datetime.timedelta(minutes=4))

    age = value(scrape(), AGE)

    assert 240 <= age < 300


def test_before_the_first_heartbeat_the_age_is_left_out() -> None:
    assert (AGE, ()) not in scrape()


def test_the_alert_reads_the_exported_age() -> None:
    from pathlib import Path

    rules = (Path(__file__).parent.parent / "config/grafana/alerts.yml").read_text()

    assert AGE in rules
