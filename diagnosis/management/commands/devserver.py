"""Run the development web server and a django-q2 worker side by side.

The worker's output goes to a log file, not the terminal; both processes share a fresh
Prometheus multi-process directory, so /metrics adds up what the web server and the
worker did. Once the web server answers and the worker has run a task, the last lines
say where everything is (and, with --admin, how to log in).
"""

import contextlib
import ctypes
import ctypes.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from django.conf import settings
from django.core.management.base import CommandError
from django.core.management.commands.runserver import naiveip_re
from django.db import DatabaseError, connection

from diagnosis.management.commands._base import ServiceCommand
from diagnosis.management.commands.ensure_admin import admin_ensure, admin_login_lines

STOP_GRACE_SECONDS = 10
START_TIMEOUT_SECONDS = 90
PR_SET_PDEATHSIG = 1
# A task every worker can run: it records the worker's heartbeat (which /readyz reads).
# Named, not imported: the task belongs to an app above this one.
PROBE_TASK = "evaluation.tasks.worker_heartbeat"


class Command(ServiceCommand):
    help = (
        "Run the web server and a qcluster worker together (DEBUG only); Ctrl-C stops both. "
        "The worker logs to VAR_DIR/log/worker.log."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument(
            "--admin",
            metavar="USERNAME",
            help="once both are up, create or reset this superuser and print its password",
        )

    def handle(self, *args: Any, addrport: str, admin: str | None, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError(
                "devserver is for a development machine: run it with DEBUG=1 "
                "(in production, gunicorn and `manage.py qcluster`)."
            )
        host, port = _address(addrport)
        _refuse_busy_port(host, port)
        worker_log = Path(settings.VAR_DIR) / "log" / "worker.log"
        worker_log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env["PROMETHEUS_MULTIPROC_DIR"] = str(_fresh_metrics_dir())
        # The worker's own file, so its start-up and per-task lines are worth keeping.
        worker_env = {**env, "Q_LOG_LEVEL": os.environ.get("Q_LOG_LEVEL") or "INFO"}

        manage = str(settings.BASE_DIR / "manage.py")
        children: dict[str, subprocess.Popen] = {}
        interrupts = _Interrupts()
        exit_code = 0
        with open(worker_log, "w", encoding="utf-8") as log:
            try:
                # Each child leads its own process group so that stopping it also stops
                # what it started (runserver's autoreloader child, qcluster's workers).
                children["qcluster"] = _start([sys.executable, manage, "qcluster"], worker_env, log)
                children["web"] = _start([sys.executable, manage, "runserver", addrport], env)
                self._wait_until_up(children, host, port, worker_log)
                self._say_where_everything_is(host, port, worker_log, admin)
                while True:
                    for name, child in children.items():
                        if child.poll() is not None:
                            self.stderr.write(f"{name} exited with status {child.returncode}")
                            exit_code = child.returncode or 1
                            raise KeyboardInterrupt
                    time.sleep(0.5)
            except KeyboardInterrupt:
                self.stdout.write("Stopping the web server and the worker ...")
            finally:
                _stop(children.values(), interrupts)
        if exit_code:
            sys.exit(exit_code)

    def _wait_until_up(
        self, children: dict[str, subprocess.Popen], host: str, port: int, worker_log: Path
    ) -> None:
        from django_q.models import Task
        from django_q.tasks import async_task

        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        # Kept after it runs (save=True) so this process can see that a worker took it.
        task_id = async_task(PROBE_TASK, save=True)
        web_up = worker_up = False
        while not (web_up and worker_up):
            for name, child in children.items():
                if child.poll() is not None:
                    where = f"; see {_shown(worker_log)}" if name == "qcluster" else ""
                    raise CommandError(
                        f"{name} exited with status {child.returncode} while starting{where}."
                    )
            if time.monotonic() > deadline:
                waiting = "the task worker" if web_up else "the web server"
                raise CommandError(
                    f"{waiting} did not start within {START_TIMEOUT_SECONDS}s "
                    f"(worker log: {_shown(worker_log)})."
                )
            web_up = web_up or _accepts(host, port)
            worker_up = worker_up or _task_done(Task, task_id)
            time.sleep(0.2)
        with contextlib.suppress(DatabaseError):
            Task.objects.filter(id=task_id).delete()
        # The web server and the worker share the database file; this process is done with it.
        connection.close()

    def _say_where_everything_is(
        self, host: str, port: int, worker_log: Path, admin: str | None
    ) -> None:
        base = f"http://{_display_host(host)}:{port}"
        lines = [
            "",
            "The service is up: the web server and a task worker. Ctrl-C stops both.",
            f"  Worker log:    {_shown(worker_log)}",
            f"  Metrics:       {base}/metrics",
        ]
        if admin:
            password = admin_ensure(username=admin)
            connection.close()
            # Last, where nothing printed at start-up can push it out of sight.
            lines.append(admin_login_lines(url=f"{base}/admin/", username=admin, password=password))
        _write_now(self.stdout, "\n".join(lines))


def _address(addrport: str) -> tuple[str, int]:
    match = re.match(naiveip_re, addrport)
    if match is None or not 0 < int(match["port"]) < 65536:
        raise CommandError(f"{addrport!r} is not a port or an address:port, e.g. 127.0.0.1:8000.")
    host = match["addr"] or "127.0.0.1"
    return host.strip("[]"), int(match["port"])


def _refuse_busy_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        # As runserver binds: a port left in TIME_WAIT by the last run is free to use.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise CommandError(
                f"Cannot listen on {host}:{port} ({exc.strerror}): is another server running "
                "there? Choose another port, e.g. `make run PORT=8001`."
            ) from exc


def _fresh_metrics_dir() -> Path:
    """The Prometheus multi-process directory, emptied: samples of an earlier run (or of
    processes that are gone) would otherwise be added to this run's."""
    configured = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    directory = Path(configured) if configured else Path(settings.VAR_DIR) / "prometheus"
    directory.mkdir(parents=True, exist_ok=True)
    # Only the library's own files: a directory someone configured may hold other things.
    for stale in directory.glob("*.db"):
        stale.unlink()
    return directory


def _start(argv: list[str], env: dict[str, str], log: TextIO | None = None) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603
        argv,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT if log else None,
        start_new_session=True,
        preexec_fn=_die_with_parent,
    )


def _accepts(host: str, port: int) -> bool:
    # A bare connection, not a request: runserver opens its socket once the project has
    # loaded, and a probe request would add lines to its log.
    try:
        with socket.create_connection((_display_host(host), port), timeout=1):
            return True
    except OSError:
        return False


def _task_done(task_model: Any, task_id: str) -> bool:
    try:
        return task_model.objects.filter(id=task_id).exists()
    except DatabaseError:  # the worker is writing: ask again
        return False


def _display_host(host: str) -> str:
    if host in ("0.0.0.0", ""):  # noqa: S104
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def _shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(Path.cwd()))
    return str(path)


def _write_now(out: Any, text: str) -> None:
    out.write(text)
    # Through a pipe (make, tee, a test) stdout is block-buffered: the last lines must show.
    out.flush()


def _die_with_parent() -> None:
    # Should this command itself be killed outright (kill -9), Linux stops the children
    # too instead of leaving a server and a worker running unattended.
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class _Interrupts:
    """Ctrl-C, and `kill <pid>` alike. The first raises KeyboardInterrupt where the
    command waits, and the pair is stopped; one that comes while they stop only asks
    that they be stopped at once (_stop): raised again, it ended the command halfway
    through stopping, with a traceback."""

    def __init__(self) -> None:
        self.again = False
        # Installed even when whatever started this command ignored SIGINT (a script's
        # background job does: `make run &`), which Python would keep ignoring.
        self._handle_with(self._first)

    def stopping(self) -> None:
        self._handle_with(self._later)

    def _handle_with(self, handler: Any) -> None:
        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    def _first(self, signum: int, frame: Any) -> None:
        # Before raising: a second Ctrl-C may come while the exception is handled.
        self.stopping()
        raise KeyboardInterrupt

    def _later(self, signum: int, frame: Any) -> None:
        self.again = True


def _stop(children: Any, interrupts: _Interrupts) -> None:
    interrupts.stopping()
    # The leader first: qcluster stops its own workers cleanly on SIGTERM (signalling the
    # whole group at once leaves it waiting for workers that are already gone).
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for child in children:
        while child.poll() is None and not interrupts.again and time.monotonic() < deadline:
            time.sleep(0.1)
        if child.poll() is None:  # out of time, or Ctrl-C again: no more waiting
            child.kill()
            child.wait()
        # Whatever the leader left behind in its group (runserver's reloaded child).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
