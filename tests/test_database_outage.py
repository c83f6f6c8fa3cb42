"""MariaDB stops and starts again under load: the API answers 503 in JSON quickly during
the outage, recovers by itself afterwards, and loses nothing it acknowledged."""

import itertools
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass

import pytest

from tests.mariadb_server import MARIADBD, PrivateMariaDB
from tests.processes import ROOT, descendants, post_json, start_gunicorn, stop_group, wait_for

# Runs in the MariaDB pass of the suite; it brings its own server, which it stops.
pytestmark = [pytest.mark.mysql, pytest.mark.integration, pytest.mark.slow]

THREADS = 6
SEED = """
import json
from diagnosis.models import ApiKey, DiagnosisSession
_, key = ApiKey.objects.create_key(name="outage", scope="full")
DiagnosisSession.objects.bulk_create(
    [DiagnosisSession(session_id=f"done-{n}", query="q", status="SUCCESS", answer="a")
     for n in range(20000)]
    + [DiagnosisSession(session_id=f"run-{n}", query="q") for n in range(%d)]
)
print(json.dumps({"key": key}))
"""


STORED = """
import json
from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession, ToolInvocation
useful = DiagnosisSession.objects.filter(feedback="useful")
print(json.dumps({
    "invocations": list(ToolInvocation.objects.values_list("invocation_id", flat=True)),
    "useful": list(useful.values_list("session_id", flat=True)),
    "cases": list(CaseLibrary.objects.values_list("diagnosis_id", flat=True)),
}))
"""


@dataclass
class Reply:
    started: float
    elapsed: float
    kind: str
    target: str
    status: int
    body: dict


def _manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_the_api_survives_a_database_restart_under_load(tmp_path) -> None:
    assert os.path.exists(MARIADBD), "needs the mariadb-server package (.ci/run installs it)"
    database = PrivateMariaDB(tmp_path)
    database.install()
    database.start()
    gunicorn = None
    try:
        database.sql("CREATE DATABASE outage CHARACTER SET utf8mb4")
        env = {k: v for k, v in os.environ.items() if k not in {"Q_SYNC"}}
        env.update(
            DATABASE_URL=database.url("outage"),
            Q_SYNC="0",
            DB_CONNECT_TIMEOUT="2",
            DB_READ_TIMEOUT="5",
            DB_WRITE_TIMEOUT="5",
            FEEDBACK_RATE_LIMIT="off",
            READYZ_WORKER_MAX_AGE="0",
        )
        _manage(env, "migrate", "--noinput")
        key = json.loads(_manage(env, "shell", "-c", SEED % THREADS).splitlines()[-1])["key"]
        gunicorn, base = start_gunicorn(env, workers=4)
        workers_before = descendants(gunicorn.pid)

        replies: list[Reply] = []
        stop = threading.Event()
        feedback_targets = itertools.count()
        lock = threading.Lock()

        def load(thread: int) -> None:
            for n in itertools.count():
                if stop.is_set():
                    return
                if n % 2:
                    target = f"t{thread}-{n}"
                    url = f"{base}/api/sessions/run-{thread}/tool-invocations"
                    body: object = {"invocationId": target, "toolName": "t", "status": "SUCCESS"}
                    kind = "invocation"
                else:
                    with lock:
                        target = f"done-{next(feedback_targets)}"
                    url, body, kind = (
                        f"{base}/api/feedback",
                        {"sessionId": target, "feedback": "useful"},
                        "feedback",
                    )
                started = time.monotonic()
                try:
                    status, payload = post_json(url, body, key=key, timeout=20)
                except OSError as error:  # the server did not answer at all
                    status, payload = 0, {"error": repr(error)}
                replies.append(
                    Reply(started, time.monotonic() - started, kind, target, status, payload)
                )

        threads = [threading.Thread(target=load, args=(t,)) for t in range(THREADS)]
        for thread in threads:
            thread.start()
        time.sleep(4)
        outage_started = time.monotonic()
        database.stop()
        down_at = time.monotonic()  # the server has finished shutting down
        time.sleep(2)
        readyz_during = _get(f"{base}/readyz")
        healthz_during = _get(f"{base}/healthz")
        time.sleep(4)
        up_at = time.monotonic()  # from here on it may answer again
        database.start()
        outage_ended = time.monotonic()
        wait_for(
            lambda: any(r.started > outage_ended and r.status in (200, 201) for r in replies),
            timeout=30,
            what="the API to recover",
        )
        recovered_at = min(
            r.started for r in replies if r.started > outage_ended and r.status in (200, 201)
        )
        time.sleep(3)
        stop.set()
        for thread in threads:
            thread.join(timeout=30)

        before = [r for r in replies if r.started + r.elapsed < outage_started]
        during = [r for r in replies if r.started > down_at and r.started + r.elapsed < up_at]
        after = [r for r in replies if r.started > recovered_at]
        print(  # the figures for the record
            f"\nrequests: {len(replies)} total, {len(before)} before, {len(during)} during "
            f"({up_at - outage_started:.1f}s outage), {len(after)} after; recovered "
            f"{recovered_at - outage_ended:.2f}s after restart; slowest reply during the outage "
            f"{max(r.elapsed for r in during):.2f}s"
        )

        assert before and during and after
        assert {r.status for r in before} <= {200, 201}
        assert {r.status for r in during} == {503}
        for reply in during:
            if reply.kind == "feedback":
                assert reply.body == {
                    "success": False,
                    "message": "服务暂不可用，请稍后重试",
                    "caseId": None,
                }
            else:
                assert reply.body["code"] == "service_unavailable"
        assert max(r.elapsed for r in during) < 8
        assert not [r for r in replies if r.status in (0, 500, 502, 504)]
        assert {r.status for r in after} <= {200, 201}
        assert recovered_at - outage_ended < 10
        assert descendants(gunicorn.pid) == workers_before  # recovered without restarting
        assert readyz_during[0] == 503 and readyz_during[1]["checks"]["database"] == "unreachable"
        assert healthz_during == (200, {"status": "ok"})

        acknowledged_invocations = {
            r.target for r in replies if r.kind == "invocation" and r.status == 201
        }
        acknowledged_feedback = {
            r.target for r in replies if r.kind == "feedback" and r.status == 200
        }
        check = json.loads(_manage(env, "shell", "-c", STORED).splitlines()[-1])
        assert acknowledged_invocations <= set(check["invocations"])
        assert acknowledged_feedback <= set(check["useful"])
        assert acknowledged_feedback <= set(check["cases"])
    finally:
        if gunicorn is not None:
            stop_group(gunicorn)
        database.kill()


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
