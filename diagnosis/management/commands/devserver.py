"""Run the development web server and a django-q2 worker side by side."""

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

STOP_GRACE_SECONDS = 10
PR_SET_PDEATHSIG = 1


class Command(BaseCommand):
    help = "Run the web server and a qcluster worker together; Ctrl-C stops both."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args: Any, addrport: str, **options: Any) -> None:
        manage = str(settings.BASE_DIR / "manage.py")
        commands = {
            "qcluster": [sys.executable, manage, "qcluster"],
            "web": [sys.executable, manage, "runserver", addrport],
        }
        # Each child leads its own process group so that stopping it also stops what it
        # started (runserver's autoreloader child, qcluster's workers).
        children = {
            name: subprocess.Popen(argv, start_new_session=True, preexec_fn=_die_with_parent)  # noqa: S603
            for name, argv in commands.items()
        }
        signal.signal(signal.SIGTERM, _interrupt)
        exit_code = 0
        try:
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
            _stop(children.values())
        if exit_code:
            sys.exit(exit_code)


def _die_with_parent() -> None:
    # Should this command itself be killed outright (kill -9), Linux stops the children
    # too instead of leaving a server and a worker running unattended.
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _interrupt(signum: int, frame: Any) -> None:
    # `kill <pid>` stops the pair the same way Ctrl-C does.
    raise KeyboardInterrupt


def _stop(children: Any) -> None:
    # The leader first: qcluster stops its own workers cleanly on SIGTERM (signalling the
    # whole group at once leaves it waiting for workers that are already gone).
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        # Whatever the leader left behind in its group (runserver's reloaded child).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
