"""/healthz and /readyz for load balancers and orchestrators.

The probes are ordinary URL routes (config/urls.py), answered early: the middleware below
sits at the top of the stack and hands them to their views before anything validates the
Host header or redirects to HTTPS, because probes come from inside the network, by IP,
over HTTP. The checks every deployment has (database, migrations) live here; an app adds
its own (the task worker's heartbeat is evaluation's) through `readiness(extra=...)`.
"""

import logging
from collections.abc import Callable

from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

logger = logging.getLogger(__name__)

PROBE_PATHS = ("/healthz", "/readyz")

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


def readiness(*, extra: dict[str, Callable[[], str]]) -> tuple[bool, dict[str, str]]:
    """The database, the migrations and each `extra` check: "ok" (or "not checked") each,
    or what is wrong."""
    checks: dict[str, str] = {}
    try:
        checks["database"] = _database()
    except DatabaseError as exc:
        logger.warning("readiness: database unreachable: %s", exc.__class__.__name__)
        return False, {"database": "unreachable", "migrations": "unknown"} | dict.fromkeys(
            extra, "unknown"
        )
    try:
        checks["migrations"] = _migrations()
        for name, check in extra.items():
            checks[name] = check()
    except DatabaseError as exc:
        logger.warning("readiness: check failed: %s", exc.__class__.__name__)
        for name in ("migrations", *extra):
            checks.setdefault(name, "unknown")
    ready = all(value in ("ok", "not checked") for value in checks.values())
    return ready, checks


def readiness_response(*, extra: dict[str, Callable[[], str]]) -> JsonResponse:
    ready, checks = readiness(extra=extra)
    return JsonResponse(
        {"status": "ready" if ready else "not ready", "checks": checks},
        status=200 if ready else 503,
    )


def healthz_view(request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers. Touches nothing else."""
    return JsonResponse({"status": "ok"})


class HealthCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path in PROBE_PATHS:
            try:
                match = resolve(request.path_info)
            except Resolver404:
                return self.get_response(request)
            return match.func(request, *match.args, **match.kwargs)
        return self.get_response(request)
