"""A real `qcluster` on a Redis broker that stops for a while: its lines stay JSON, in
English under a Chinese LANGUAGE_CODE, and the line django-q2 writes at every cycle of its
guard is written once."""

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tests.processes import ROOT, child_env, free_port, stop_group, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OUTAGE_SECONDS = 12  # 24 cycles of the guard, one restart of the pusher
CJK = re.compile(r"[\u4e00-\u9fff]")


def start_redis(port: int, data: Path) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(data),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    client = redis.Redis(port=port)
    wait_for(lambda: _pings(client), timeout=10, what="redis-server")
    return server


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def cluster_reported(client: redis.Redis) -> bool:
    """The cluster's guard has saved its status in the broker since it was last cleared."""
    try:
        return bool(client.keys("django_q:*:cluster*"))
    except redis.ConnectionError:
        return False


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
def test_a_broker_outage_is_a_few_english_json_lines(tmp_path) -> None:
    port = free_port()
    redis_server = start_redis(port, tmp_path)
    client = redis.Redis(port=port)
    log = tmp_path / "qcluster.log"
    env = child_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        Q_REDIS_URL=f"redis://127.0.0.1:{port}/0",
        LANGUAGE_CODE="zh-hans",
    )
    env.pop("LOG_FORMAT", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with log.open("w") as out:
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for(lambda: cluster_reported(client), timeout=60, what="the cluster's status")
            stop_group(redis_server)
            time.sleep(OUTAGE_SECONDS)
            redis_server = start_redis(port, tmp_path)
            wait_for(lambda: cluster_reported(client), timeout=60, what="the cluster again")
        finally:
            stop_group(worker)
            stop_group(redis_server)

    lines = log.read_text().splitlines()
    entries = [json.loads(line) for line in lines]  # fails on any line that is not JSON
    assert not [line for line in lines if CJK.search(line)]
    refused = [e for e in entries if "Connection refused" in e["message"]]
    guard = [e for e in refused if not e["message"].startswith(("Failed to", "Could not"))]
    assert len(guard) == 1
    assert not [e for e in entries if "Traceback" in e.get("exception", "")]
    assert len(lines) <= 8
