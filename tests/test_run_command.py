"""The README's run command: one command brings up the admin and a task worker."""

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.processes import (
    ROOT,
    alive,
    descendants,
    free_port,
    http_ok,
    post_json,
    stop_group,
    wait_for,
)

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


class Terminal:
    """What `make run` prints, line by line, as a person at the terminal sees it."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._reader.start()

    def _read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"


def _scrape(base: str) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_make_run_ends_with_the_admin_login_and_runs_a_worker_whose_work_the_metrics_show(
    tmp_path: Path,
) -> None:
    port = free_port()
    database = tmp_path / "db.sqlite3"
    env = {
        k: v
        for k, v in os.environ.items()
        # MAKEFLAGS too: `make test DATABASE_URL=...` would hand its variables down.
        if k not in {"DATABASE_URL", "Q_SYNC", "SECRET_KEY", "DEBUG", "MAKEFLAGS", "MFLAGS"}
    }
    env.update(DATABASE_URL=f"sqlite:///{database}", Q_SYNC="0")
    var_dir = Path(env["VAR_DIR"])  # the suite's temporary directory (tests/conftest.py)
    make = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        # Started the way a script's background job starts it (`make run &`), with SIGINT
        # ignored: Ctrl-C (SIGINT to the group) must stop it all the same.
        preexec_fn=_ignore_sigint,
    )
    terminal = Terminal(make)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(
            lambda: re.search(r"password:\s+\S+", terminal.text()),
            timeout=180,
            what="the admin password",
        )
        time.sleep(1)  # anything printed after it would show up now
        *start_up, url_line, user_line, password_line = terminal.lines

        # The login is the last thing printed, after a short start-up (no migration list,
        # no line per demo feedback, no worker chatter), and it names the worker's log.
        assert url_line.split() == ["Admin", "console:", f"{base}/admin/"], terminal.text()
        assert user_line.split() == ["user:", "admin"]
        password = password_line.split()[-1]
        assert len(start_up) < 40, terminal.text()
        assert "django-q" not in terminal.text()
        (log_line,) = [line for line in start_up if "Worker log:" in line]
        worker_log = Path(log_line.split("Worker log:")[1].strip())
        worker_log = worker_log if worker_log.is_absolute() else ROOT / worker_log
        assert worker_log.resolve() == (var_dir / "log" / "worker.log").resolve()
        assert "django-q" in worker_log.read_text()

        page = _login(base, "admin", password)
        assert page.startswith(f"{base}/admin/\n"), page[:300]

        # The worker scores a session the web server completed; /metrics adds up both.
        key = subprocess.run(
            [str(ROOT / ".venv/bin/python"), "manage.py", "create_api_key", "run-test"],
            cwd=ROOT,
            env={**env, "DEBUG": "1"},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
        before = _scrape(base).get(("diagnosis_evidence_score_count", ()), 0.0)
        post_json(f"{base}/api/sessions", {"sessionId": "run-1", "query": "504?"}, key=key)
        status, _ = post_json(
            f"{base}/api/sessions/run-1/complete",
            {"status": "SUCCESS", "answer": "根因：连接池耗尽。"},
            key=key,
        )
        assert status == 200

        def scored() -> bool:
            request = urllib.request.Request(
                f"{base}/api/sessions/run-1", headers={"Authorization": f"Api-Key {key}"}
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read())["selfEvaluation"] is not None

        wait_for(scored, timeout=60, what="the worker to score the session")
        samples = _scrape(base)
        assert samples[("diagnosis_evidence_score_count", ())] >= before + 1
        assert samples[("diagnosis_sessions_completed_total", (("status", "SUCCESS"),))] >= 1
        # The samples live under the run directory, not in the checkout.
        assert list((var_dir / "prometheus").glob("*.db"))

        processes = descendants(make.pid) | {make.pid}
        os.killpg(make.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        try:
            make.wait(timeout=30)
        except subprocess.TimeoutExpired:
            running = {pid: _command_line(pid) for pid in alive(processes | descendants(make.pid))}
            pytest.fail(
                f"make run did not stop within 30 s of Ctrl-C; still running: {running}\n"
                f"{terminal.text()[-3000:]}\n--- worker log ---\n"
                f"{(var_dir / 'log' / 'worker.log').read_text()[-3000:]}"
            )
        wait_for(lambda: not alive(processes), timeout=20, what="every process to stop")
        assert not http_ok(f"{base}/admin/login/")
    finally:
        stop_group(make, signal.SIGKILL)
