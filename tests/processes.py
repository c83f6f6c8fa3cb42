"""Helpers for tests that start real processes (web server, qcluster, gunicorn)."""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise TimeoutError(f"gave up after {timeout}s waiting for {what}")


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def process_group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    still = set()
    for pid in pids:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if state != "Z":
            still.add(pid)
    return still


def stop_group(process: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """Stop a process started with start_new_session=True, and everything it started.

    The leader gets `sig` and `timeout` seconds to stop its own children; whatever is
    left in its process group, or below it in other groups, is then killed.
    """
    family = descendants(process.pid)
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    for pid in alive(family):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def child_database_url() -> str:
    """A DATABASE_URL for child processes that points at the test database."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "mysql":
        host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}"
        return f"mysql://{db['USER']}:{db['PASSWORD']}@{host}/{db['NAME']}"
    return f"sqlite:///{db['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a real server/worker process on the test database."""
    env = {k: v for k, v in os.environ.items() if k not in {"Q_SYNC"}}
    env.update(DATABASE_URL=child_database_url(), Q_SYNC="0", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def command_started(*args: str) -> subprocess.Popen:
    """`manage.py args` on the test database, in a process group of its own, its output
    piped as text. Ctrl-C reaches a command run from a terminal; a job a script started
    in the background (as CI runs the suite) has SIGINT ignored and passes that on, so the
    child gets SIGINT's default back."""
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def start_gunicorn(
    env: dict[str, str], *, workers: int = 4, log=None, args: tuple[str, ...] = ()
) -> tuple[subprocess.Popen, str]:  # type: ignore[no-untyped-def]
    """gunicorn serving the real app; returns the process and its base URL once it answers.
    `args`: more command-line options (say, ("-c", "config/gunicorn.conf.py"))."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--timeout",
            "60",
            *args,
        ],
        cwd=ROOT,
        env=env,
        stdout=log or subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{base}/api/schema"), timeout=60, what="gunicorn")
    except TimeoutError:
        stop_group(process)
        raise
    return process, base


def gunicorn_command(port: int) -> list[str]:
    """gunicorn as production starts it, with config/gunicorn.conf.py, on loopback `port`."""
    return [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        "-c",
        "config/gunicorn.conf.py",
        "--bind",
        f"127.0.0.1:{port}",
    ]


@contextlib.contextmanager
def gunicorn_with_config(
    env: dict[str, str],
    *,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,  # type: ignore[no-untyped-def]
) -> Iterator[tuple[str, int]]:
    """One gunicorn worker started as production starts it, with config/gunicorn.conf.py
    (its worker class, logging and access log); yields its base URL and port once
    /healthz answers, and stops it afterwards. `stdout`/`stderr`: where its access lines
    and its error log go."""
    port = free_port()
    web = subprocess.Popen(
        [*gunicorn_command(port), "--workers", "1"],
        cwd=ROOT,
        env=env,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: http_ok(f"{base}/healthz"), timeout=60, what="gunicorn")
        yield base, port
    finally:
        stop_group(web)


def run_until_it_exits(
    command: list[str], *, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess:
    """`command` run from the checkout to its end, its output captured; a process still
    running after `timeout` seconds is stopped and fails the test."""
    import pytest

    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(process)
        process.communicate()
        pytest.fail(f"{command} kept running after {timeout:g} s")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def post_json(url: str, body: object, *, key: str, timeout: float = 30) -> tuple[int, dict]:
    """POST JSON; returns (status, parsed body) for any status code."""
    import json

    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Api-Key {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        payload = error.read()
        try:
            return error.code, json.loads(payload or b"null")
        except ValueError:
            return error.code, {"raw": payload.decode(errors="replace")}
