"""The probes' routes, and the readiness check this app owns: a task worker is alive.

Included by config/urls.py; config/health.py answers both paths ahead of the rest of the
middleware (see there) and holds the checks every deployment has.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import Max
from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.utils import timezone

from config.health import healthz_view, readiness_response
from evaluation.models import WorkerHeartbeat


def worker_check() -> str:
    """Is a task-queue worker alive: a heartbeat within READYZ_WORKER_MAX_AGE seconds."""
    max_age = settings.READYZ_WORKER_MAX_AGE
    if not max_age:
        return "not checked"
    newest = WorkerHeartbeat.objects.aggregate(newest=Max("beat_at"))["newest"]
    if newest is None:
        return "no heartbeat yet"
    age = timezone.now() - newest
    if age > timedelta(seconds=max_age):
        return f"last heartbeat {int(age.total_seconds())}s ago"
    return "ok"


def readyz_view(request: HttpRequest) -> JsonResponse:
    """Readiness: the database answers, every migration is applied, a worker is alive."""
    return readiness_response(extra={"worker": worker_check})


urlpatterns = [
    path("healthz", healthz_view, name="healthz"),
    path("readyz", readyz_view, name="readyz"),
]
