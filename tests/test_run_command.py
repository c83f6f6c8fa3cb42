"""The README's run command: one command brings up the admin and a task worker."""

import http.cookiejar
import os
import re
import signal
import sqlite3
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from tests.processes import ROOT, alive, descendants, free_port, http_ok, stop_group, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _login(base: str, username: str, password: str) -> str:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base}/admin/login/", timeout=10).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode(
        {
            "csrfmiddlewaretoken": token,
            "username": username,
            "password": password,
            "next": "/admin/",
        }
    ).encode()
    request = urllib.request.Request(
        f"{base}/admin/login/?next=/admin/", data=form, headers={"Referer": f"{base}/admin/"}
    )
    with opener.open(request, timeout=10) as response:
        return response.geturl() + "\n" + response.read().decode()


def test_make_run_serves_the_admin_with_the_printed_password_and_runs_a_worker(tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    database = tmp_path / "db.sqlite3"
    env = {
        k: v
        for k, v in os.environ.items()
        # MAKEFLAGS too: `make test DATABASE_URL=...` would hand its variables down.
        if k not in {"DATABASE_URL", "Q_SYNC", "SECRET_KEY", "DEBUG", "MAKEFLAGS", "MFLAGS"}
    }
    env.update(DATABASE_URL=f"sqlite:///{database}", Q_SYNC="0")
    make = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        output = []
        password = None
        deadline = time.monotonic() + 120
        while password is None and time.monotonic() < deadline:
            line = make.stdout.readline()
            if not line:
                break
            output.append(line)
            match = re.search(r"user: admin\s+password: (\S+)", line)
            password = match.group(1) if match else None
        assert password, "".join(output)
        wait_for(lambda: http_ok(f"{base}/admin/login/"), timeout=60, what="the admin")

        page = _login(base, "admin", password)
        assert page.startswith(f"{base}/admin/\n"), page[:300]

        # A worker is running if a task put on the queue gets done.
        enqueue = subprocess.run(
            [
                str(ROOT / ".venv/bin/python"),
                "manage.py",
                "shell",
                "-c",
                "from django_q.tasks import async_task; print(async_task('math.floor', 2.5))",
            ],
            cwd=ROOT,
            env={**env, "DEBUG": "1"},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        task_id = enqueue.stdout.strip().splitlines()[-1]

        def task_done() -> bool:
            # Successes are not stored by default (Q_SAVE_LIMIT=-1): the task is done when
            # its queue entry has been acknowledged (deleted) and no failure was saved.
            with sqlite3.connect(database) as db:
                queued = db.execute("SELECT COUNT(*) FROM django_q_ormq").fetchone()[0]
                failed = db.execute(
                    "SELECT COUNT(*) FROM django_q_task WHERE id = ?", [task_id]
                ).fetchone()[0]
            return queued == 0 and failed == 0

        wait_for(task_done, timeout=30, what="the qcluster worker to run a task")

        processes = descendants(make.pid) | {make.pid}
        os.killpg(make.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        make.wait(timeout=30)
        wait_for(lambda: not alive(processes), timeout=20, what="every process to stop")
        assert not http_ok(f"{base}/admin/login/")
    finally:
        stop_group(make, signal.SIGKILL)
