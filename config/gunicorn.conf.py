"""gunicorn settings: `gunicorn -c config/gunicorn.conf.py config.wsgi`. The master reads
the service's settings before it starts a worker: a bad one stops gunicorn with a line
per bad variable and exit status 1, where each worker would otherwise print a traceback
and fail to boot. Then it runs Django's system checks, as `manage.py runserver` does
before it serves: an error among them stops gunicorn the same way, a line each, so
gunicorn never serves with settings that manage.py refuses. A worker that exits has its
live gauges removed from the shared directory of metrics in multi-process mode
(PROMETHEUS_MULTIPROC_DIR); its counters stay, so totals never go backwards. More than
one worker without that directory starts with a WARNING: each scrape would read one
worker's counters. With CASE_SEARCH_WARM_ON_START, a worker loads what a search needs as
it starts. The worker timeout outlasts a request that waits on a hanging database, so that
the request still answers 503 (see _worker_timeout()). gunicorn's own lines are the
service's JSON lines, and each request has an access line on stdout
(config/gunicorn_logging.py; GUNICORN_ACCESS_LOG=0 turns it off). What gunicorn answers
itself (a request line over its limit: 414) is JSON as well (config/gunicorn_worker.py)."""

import os
import sys
from pathlib import Path

# The project's root, for the import below when gunicorn starts in another directory
# (its --chdir is applied after this file is read).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from config.gunicorn_logging import access_log_problem, gunicorn_logconfig  # noqa: E402

# What a request does besides waiting on the database: its own work, a slow health check.
# (Names with a leading underscore are never taken for one of gunicorn's settings.)
_DATABASE_WAIT_MARGIN = 15


def _seconds(name: str, default: int) -> int:
    """The whole number of seconds config/settings.py reads from `name` (config.env.env_int,
    at least 1). A value the settings refuse stops gunicorn in on_starting, naming the
    variable: the default stands in for it until then, and nothing is noted here."""
    value = os.environ.get(name, "").strip()
    if not value.isascii():
        return default
    try:
        number = int(value)
    except ValueError:
        return default
    return number if number >= 1 else default


def _worker_timeout() -> int:
    """Seconds a worker may spend on one request before gunicorn kills it. When the database
    hangs (the connection is up, nothing answers) a request waits DB_READ_TIMEOUT for the
    health check of its connection, then DB_CONNECT_TIMEOUT for a new one, and answers 503
    with Retry-After. gunicorn's default (30 s) killed the worker first: the client got a
    dropped connection, logged nowhere and counted in no metric."""
    read = _seconds("DB_READ_TIMEOUT", 30)
    connect = _seconds("DB_CONNECT_TIMEOUT", 5)
    return read + connect + _DATABASE_WAIT_MARGIN


# Set here, so gunicorn's --timeout / --graceful-timeout (on the command line or in
# GUNICORN_CMD_ARGS) still win: gunicorn reads them after this file. The graceful timeout
# is the same: a worker stopped (a restart, a deploy) while its request waits on the
# database still gets to answer it.
timeout = _worker_timeout()
graceful_timeout = timeout

# gunicorn's control socket (`gunicornc`, gunicorn 25.1+) only where the operator names
# its path: by default every master of one user opens the same file in the home
# directory, so a second instance on the machine took the first one's over.
if os.environ.get("GUNICORN_CONTROL_SOCKET"):
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]
else:
    control_socket_disable = True


# Whether a request came over HTTPS is Django's call alone: SECURE_PROXY_SSL_HEADER=1 trusts
# a TLS proxy's X-Forwarded-Proto, and nothing else does. gunicorn's default trusts that
# header (and X-Forwarded-Ssl, X-Forwarded-Protocol) from 127.0.0.1 and ::1 itself and
# sets wsgi.url_scheme to https, so with SECURE_PROXY_SSL_HEADER=0 any local process
# could send plain HTTP past the 403 https_required and the redirect to HTTPS. gunicorn
# has no command-line option for this setting; it is read from this file only.
secure_scheme_headers: dict[str, str] = {}

# gunicorn's sync worker, whose own answers to what it refuses before Django sees it (a
# request line or header fields over its limits, a request it cannot parse: 400, 414,
# 431) are the API's JSON errors, not its HTML page (config/gunicorn_worker.py). A
# --worker-class on the command line wins, and answers those in HTML again.
worker_class = "config.gunicorn_worker.JsonErrorSyncWorker"

# gunicorn's error log through the service's handler and formatter (LOG_FORMAT), and an
# access line per request on stdout with its fields (config/gunicorn_logging.py).
logconfig_dict = gunicorn_logconfig()
logger_class = "config.gunicorn_logging.AccessLogger"


def on_starting(server):  # type: ignore[no-untyped-def]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core import checks
    from django.core.exceptions import ImproperlyConfigured

    from config.env import exit_on_configuration_error, problem

    wrong = access_log_problem()
    if wrong:
        # Told with the settings' own problems, all at once, when they are read below.
        problem("GUNICORN_ACCESS_LOG", wrong)
    with exit_on_configuration_error():
        # Reads the settings (a bad variable stops here), then loads the apps the checks
        # look at, as each worker does when it loads the application (it finds them
        # loaded). The checks open no database connection for the workers to inherit,
        # and prometheus_client gives each worker files of its own pid.
        django.setup()
        # As runserver runs them: without the database's checks, and only an error stops
        # it (a warning does not).
        errors = [
            message
            for message in checks.run_checks()
            if message.is_serious() and not message.is_silenced()
        ]
        if errors:
            # One line each: Django puts a hint on a line of its own.
            lines = (" ".join(part.strip() for part in str(e).splitlines()) for e in errors)
            raise ImproperlyConfigured("\n".join(lines))
    _warn_when_workers_count_alone(server)


def _warn_when_workers_count_alone(server):  # type: ignore[no-untyped-def]
    # Not refused: one worker's counters are still right about that worker.
    from django.conf import settings

    if server.cfg.workers > 1 and not settings.PROMETHEUS_MULTIPROC_DIR:
        server.log.warning(
            "%d workers and no PROMETHEUS_MULTIPROC_DIR: each scrape of /metrics reads the "
            "counters of the one worker that answers it, so they jump up and down between "
            "scrapes. Set PROMETHEUS_MULTIPROC_DIR to a directory every process of the "
            'machine shares (docs/operations.md, "Metrics").',
            server.cfg.workers,
        )


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    # Its live gauges go, and its files of zeros (its counts stay: config/metrics.py).
    _ended(server, worker.pid)


def on_exit(server):  # type: ignore[no-untyped-def]
    # The files on_starting's django.setup() made under the master's pid, all zeros.
    _ended(server, os.getpid())


def _ended(server, pid):  # type: ignore[no-untyped-def]
    # An exception in a master's hook stops the master, and every worker with it. A
    # SIGHUP after the code was switched reloads this file, not the modules the master
    # loaded before: a hook may meet a config.metrics older than itself.
    try:
        from config import metrics

        metrics.process_ended(pid)
    except Exception:
        server.log.exception("Could not remove the metrics files of process %s", pid)


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    from django.conf import settings

    if settings.CASE_SEARCH_WARM_ON_START:
        from caselibrary.services.search import search_warm_in_background

        search_warm_in_background()
