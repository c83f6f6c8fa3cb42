"""Processes the benchmark starts (gunicorn, qcluster, wrk, commands), and their cleanup.

Every process is started in its own session and registered; `stop_all` (run at exit,
on Ctrl-C and on SIGTERM) stops each group the benchmark started, and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from tests.processes import descendants, free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
_started: list[subprocess.Popen] = []


def start(
    args: list[str], *, env: dict[str, str], log: Path | None = None, **kwargs: object
) -> subprocess.Popen:
    out = log.open("ab") if log else subprocess.DEVNULL
    process = subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdout=kwargs.pop("stdout", out),  # type: ignore[arg-type]
        stderr=kwargs.pop("stderr", subprocess.STDOUT if log else subprocess.DEVNULL),  # type: ignore[arg-type]
        start_new_session=True,
        **kwargs,  # type: ignore[arg-type]
    )
    _started.append(process)
    return process


def stop(process: subprocess.Popen, *, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """Stop a process this module started, then whatever is left in its group."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    if process in _started:
        _started.remove(process)


def forget(process: subprocess.Popen) -> None:
    """A process that has ended by itself needs no stopping."""
    if process in _started:
        _started.remove(process)


def stop_all() -> None:
    for process in list(reversed(_started)):
        stop(process, timeout=10)


def install_handlers() -> None:
    """Ctrl-C and SIGTERM unwind through `finally` blocks and stop every child."""

    def interrupted(signum: int, frame: object) -> None:
        stop_all()
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    import atexit

    atexit.register(stop_all)


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


def peak_rss_kb(pid: int) -> int | None:
    """VmHWM: the most resident memory the process ever had."""
    try:
        for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def run_measured(args: list[str], *, env: dict[str, str], log: Path) -> tuple[int, float, int]:
    """Run a command to the end; (exit status, seconds, peak RSS in kB of the process).

    The peak is VmHWM, sampled while the command runs: getrusage's ru_maxrss would also
    count the memory of this process at the fork, which exec does not reset.
    """
    started = time.monotonic()
    process = start(args, env=env, log=log)
    peak = 0
    try:
        while True:
            pid, status = os.waitpid(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, peak_rss_kb(process.pid) or 0)
            time.sleep(0.05)
    except BaseException:
        stop(process)
        raise
    elapsed = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    forget(process)
    return process.returncode, elapsed, peak


class Gunicorn:
    """The real app under gunicorn (sync workers), with the benchmark's floor views."""

    def __init__(self, *, env: dict[str, str], workers: int, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = start(
            python(
                "-m",
                "gunicorn",
                "config.wsgi",
                "--workers",
                str(workers),
                "--worker-class",
                "sync",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--timeout",
                "60",
                "--log-level",
                "warning",
            ),
            env={**env, "DJANGO_SETTINGS_MODULE": "tests.bench.settings"},
            log=log,
        )
        wait_for(self._answers, timeout=60, what="gunicorn")

    def _answers(self) -> bool:
        import urllib.error
        import urllib.request

        if self.process.poll() is not None:
            raise RuntimeError("gunicorn exited; see its log")
        try:
            with urllib.request.urlopen(f"{self.url}/api/schema", timeout=2):
                return True
        except urllib.error.HTTPError:
            return True
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def workers(self) -> list[int]:
        return sorted(descendants(self.process.pid))

    def stop(self) -> None:
        stop(self.process)


@contextlib.contextmanager
def gunicorn(*, env: dict[str, str], workers: int, log: Path) -> Iterator[Gunicorn]:
    server = Gunicorn(env=env, workers=workers, log=log)
    try:
        yield server
    finally:
        server.stop()
