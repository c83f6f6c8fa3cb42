"""/healthz and /readyz for load balancers and orchestrators.

Answered by a middleware at the top of the stack, before anything validates the Host
header or redirects to HTTPS: probes come from inside the network, by IP, over HTTP.
"""

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Max
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

logger = logging.getLogger(__name__)

_migrations_applied = False


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def _migrations() -> str:
    global _migrations_applied
    # Loading the migration graph costs tens of milliseconds; once everything is applied
    # it stays applied for the life of this process.
    if not _migrations_applied:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if plan:
            return f"{len(plan)} unapplied"
        _migrations_applied = True
    return "ok"


def _worker() -> str:
    from evaluation.models import WorkerHeartbeat

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


def readiness() -> tuple[bool, dict[str, str]]:
    checks: dict[str, str] = {}
    try:
        checks["database"] = _database()
    except DatabaseError as exc:
        logger.warning("readiness: database unreachable: %s", exc.__class__.__name__)
        return False, {"database": "unreachable", "migrations": "unknown", "worker": "unknown"}
    try:
        checks["migrations"] = _migrations()
        checks["worker"] = _worker()
    except DatabaseError as exc:
        logger.warning("readiness: check failed: %s", exc.__class__.__name__)
        checks.setdefault("migrations", "unknown")
        checks.setdefault("worker", "unknown")
    ready = all(value in ("ok", "not checked") for value in checks.values())
    return ready, checks


class HealthCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == "/healthz":
            return JsonResponse({"status": "ok"})
        if request.path == "/readyz":
            ready, checks = readiness()
            return JsonResponse(
                {"status": "ready" if ready else "not ready", "checks": checks},
                status=200 if ready else 503,
            )
        return self.get_response(request)
