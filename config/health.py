"""/healthz and /readyz for load balancers and orchestrators.

The probes are ordinary URL routes (config/urls.py), answered early: the middleware below
sits at the top of the stack (below only config.request_id, which names the request) and
hands them to their views before anything validates the Host header or redirects to HTTPS,
because probes come from inside the network, by IP, over HTTP. They answer GET and HEAD;
any other method is 405 with `Allow: GET, HEAD`, as /metrics answers it. The checks every deployment
has (database, migrations) live here; an app adds its own (the task worker's heartbeat is
evaluation's) through `readiness(extra=...)`, or as `informational=...`: reported with the
others, but never what makes a node not ready.
"""

import logging
import time
from collections.abc import Callable

from django.core.cache import cache
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

from config.deadline import CACHE, DeadlineMissed, Read, read_started, within_deadline
from config.middleware import is_write_refused

logger = logging.getLogger(__name__)

PROBE_PATHS = ("/healthz", "/readyz")

# Whether every migration was found applied, and when (time.monotonic()): the plan is
# worked out once, then re-read within MIGRATIONS_RECHECK_SECONDS, so that a rollback
# (`migrate app 0003`) makes the node not ready within that time.
MIGRATIONS_RECHECK_SECONDS = 30.0
_migrations_applied = False
_migrations_checked_at = 0.0
# The migrations this code has (app, name), once the plan was found empty.
_migrations_known: frozenset[tuple[str, str]] = frozenset()

_PASSING = ("ok",)


def database_check() -> str:
    """ "ok" when the database answers a query; the driver's error when not. A round trip
    with no table in it: the ORM has none (ensure_connection() opens a connection, and a
    reused one is not asked anything), and a table's query would test the table too."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def _migrations() -> str:
    global _migrations_applied, _migrations_checked_at, _migrations_known
    now = time.monotonic()
    if _migrations_applied:
        if now - _migrations_checked_at < MIGRATIONS_RECHECK_SECONDS:
            return "ok"
        # One query on django_migrations: every migration of this code is still recorded.
        recorded = MigrationRecorder.Migration.objects.using(connection.alias)
        if _migrations_known <= set(recorded.values_list("app", "name")):
            _migrations_checked_at = now
            return "ok"
        _migrations_applied = False  # rolled back: the plan below says how far
    # Loading the migration graph costs tens of milliseconds: only until it is all applied.
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        return f"{len(plan)} unapplied"
    _migrations_known = frozenset(executor.loader.graph.nodes)
    _migrations_applied, _migrations_checked_at = True, now
    return "ok"


def cache_check() -> str:
    # One write: the shared cache (REDIS_URL) takes one, or every API request would fail
    # (the API keys and rate limits live there; a rate limit counts by writing). A Redis
    # that is full (noeviction) or a read-only replica answers reads and refuses writes.
    # A per-process memory cache always answers.
    try:
        cache.set("readyz-probe", 1, timeout=60)
    except Exception as exc:  # whatever the cache's client raises: it cannot be used
        logger.debug("readiness: cache failing: %s", exc.__class__.__name__)
        return "refuses writes" if is_write_refused(exc) else "unreachable"
    return "ok"


Checks = dict[str, Callable[[], str]]

# Checks an app adds to every /readyz answer (read with the database's, within the
# deadline), reported but never what makes a node not ready; one that answers None is
# left out of that answer (it has nothing to say in this configuration). Added by an app's
# AppConfig.ready, or by a module it imports there: config imports no app.
REPORTED_CHECKS: dict[str, Callable[[], str | None]] = {}


def readiness(*, extra: Checks, informational: Checks | None = None) -> tuple[bool, dict[str, str]]:
    """The database, the migrations, each `extra` and `informational` check and the cache:
    "ok" each, or what is wrong ("unknown": not checked, the database being down). Ready
    when every check but the informational ones says "ok"; then the REPORTED_CHECKS apps
    added, which never make it not ready (left out when the database is down). All but
    the cache read the database; the cache is read at the same time, in a thread of its
    own, and both within PROBE_DB_DEADLINE_SECONDS (config/deadline.py)."""
    informational = informational or {}
    checks: dict[str, str] = {}
    found: dict[str, str] = {}  # written by the probe thread, read once it is done
    cache_read = read_started(cache_check, lane=CACHE)
    try:
        within_deadline(lambda: _database_checks(found, {**extra, **informational}))
        checks.update(found)
    except DatabaseError as exc:
        logger.debug("readiness: check failed: %s", exc.__class__.__name__)
        checks.update(found)
        checks.setdefault("database", "unreachable")
    except DeadlineMissed as exc:
        # A database that hangs: answered now as unreachable, the read left to end alone.
        checks["database"] = str(exc)
    for name in ("migrations", *extra, *informational):
        checks.setdefault(name, "unknown")
    checks["cache"] = _cache_answer(cache_read)
    ready = not _failing_checks(checks, informational)
    return ready, checks


def _database_checks(found: dict[str, str], checks: Checks) -> None:
    found["database"] = database_check()
    found["migrations"] = _migrations()
    for name, check in checks.items():
        found[name] = check()
    for name, reported in REPORTED_CHECKS.items():
        answer = reported()
        if answer is not None:
            found[name] = answer


def _cache_answer(cache_read: Read[str]) -> str:
    try:
        return cache_read.result()
    except DeadlineMissed as exc:
        # A cache that hangs: answered now, the read left to end alone, as the database's.
        return str(exc)


def _failing_checks(checks: dict[str, str], informational: Checks) -> frozenset[str]:
    return frozenset(
        name
        for name, value in checks.items()
        if value not in _PASSING and name not in informational and name not in REPORTED_CHECKS
    )


# The checks that failed at this process's last probe: a change is logged once, at WARNING
# (not ready) or INFO (ready again), instead of an ERROR per probe from django.request.
_failing: frozenset[str] = frozenset()


def readiness_response(*, extra: Checks, informational: Checks | None = None) -> JsonResponse:
    global _failing
    ready, checks = readiness(extra=extra, informational=informational)
    response = JsonResponse(
        {"status": "ready" if ready else "not ready", "checks": checks},
        status=200 if ready else 503,
    )
    failing = _failing_checks(checks, informational or {})
    if failing != _failing:
        if failing:
            logger.warning("readiness: not ready: %s", _summary(checks, failing))
        else:
            logger.info("readiness: ready again")
        _failing = failing
    # A load balancer probes every few seconds: django.request would log each 503 as an
    # ERROR ("Service Unavailable: /readyz"). It skips a response marked as logged.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def _summary(checks: dict[str, str], failing: frozenset[str]) -> str:
    return ", ".join(f"{name}: {value}" for name, value in checks.items() if name in failing)


def healthz_view(request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers. Touches nothing else."""
    return JsonResponse({"status": "ok"})


# The probes read, and change nothing: any other method is refused as /metrics refuses it
# (config.metrics, whose 405 is the same).
PROBE_METHODS = ("GET", "HEAD")


def probe_method_not_allowed() -> JsonResponse:
    response = JsonResponse(
        {"code": "method_not_allowed", "message": "only GET and HEAD are served here"},
        status=405,
    )
    response["Allow"] = ", ".join(PROBE_METHODS)
    return response


class HealthCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path in PROBE_PATHS:
            try:
                match = resolve(request.path_info)
            except Resolver404:
                return self.get_response(request)
            if request.method not in PROBE_METHODS:
                return probe_method_not_allowed()
            return match.func(request, *match.args, **match.kwargs)
        return self.get_response(request)
