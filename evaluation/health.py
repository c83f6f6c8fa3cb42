"""The probes' routes, and the readiness check this app owns: a task worker is alive.

Included by config/urls.py; config/health.py answers both paths ahead of the rest of the
middleware (see there) and holds the checks every deployment has.
"""

from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError
from django.db.models import DurationField, ExpressionWrapper, Max
from django.db.models.functions import Now
from django.http import HttpRequest, JsonResponse
from django.urls import path
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from config.health import healthz_view, readiness_response
from evaluation.models import WorkerHeartbeat

# The heartbeat runs once a minute: a worker that missed three is reported as gone.
WORKER_HEARTBEAT_STALE_AFTER = 180


def newest_heartbeat_age() -> timedelta | None:
    """How long ago the newest heartbeat was, None before the first one. Read off the
    database's clock, which stamped it (evaluation.services.heartbeat_record): neither the
    worker's clock nor this node's enters, so neither being off makes a live worker read
    as gone, or a stopped one as alive."""
    age = ExpressionWrapper(Now() - Max("beat_at"), output_field=DurationField())
    return WorkerHeartbeat.objects.aggregate(age=age)["age"]


def worker_check() -> str:
    """Is a task-queue worker alive: "ok" for a heartbeat within READYZ_WORKER_MAX_AGE
    seconds (WORKER_HEARTBEAT_STALE_AFTER while that is 0), else how old the last one is."""
    max_age = settings.READYZ_WORKER_MAX_AGE or WORKER_HEARTBEAT_STALE_AFTER
    age = newest_heartbeat_age()
    if age is None:
        return "no heartbeat yet"
    if age > timedelta(seconds=max_age):
        return f"last heartbeat {int(age.total_seconds())}s ago"
    return "ok"


class HeartbeatCollector(Collector):
    """`diagnosis_worker_heartbeat_age_seconds`, read at each scrape: seconds since the
    newest worker heartbeat (left out before the first one, and when the database cannot
    be read: `diagnosis_database_up` says so then)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            age = newest_heartbeat_age()
        except DatabaseError:
            return
        if age is not None:
            yield GaugeMetricFamily(
                "diagnosis_worker_heartbeat_age_seconds",
                "Seconds since a task-queue worker last ran its once-a-minute heartbeat.",
                value=max(0.0, age.total_seconds()),
            )


def readyz_view(request: HttpRequest) -> JsonResponse:
    """Readiness: the database answers, every migration is applied, the cache answers. The
    worker's heartbeat is reported, and makes the node not ready only when the operator
    sets READYZ_WORKER_MAX_AGE: the API serves without the worker (scoring waits in the
    queue), and a readiness that failed with it would take every web node out of the load
    balancer at once. A dead worker is an alert's business (config/grafana/alerts.yml)."""
    checks = {"worker": worker_check}
    if settings.READYZ_WORKER_MAX_AGE:
        return readiness_response(extra=checks)
    return readiness_response(extra={}, informational=checks)


urlpatterns = [
    path("healthz", healthz_view, name="healthz"),
    path("readyz", readyz_view, name="readyz"),
]
