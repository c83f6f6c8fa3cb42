"""What gunicorn leaves in PROMETHEUS_MULTIPROC_DIR when it stops: the counts its workers
recorded, and nothing else. Its master loads the service to check it before the workers
start (config/gunicorn.conf.py), which made a counter and a histogram file of zeros
under the master's pid at every start; each scrape read them all."""

import os
import signal
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.mmap_dict import MmapedDict

from tests.processes import (
    ROOT,
    child_env,
    descendants,
    http_ok,
    start_gunicorn,
    stop_group,
    wait_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def samples(path: Path) -> list[float]:
    return [value for _, value, _, _ in MmapedDict.read_all_values_from_file(str(path))]


def test_a_stopped_gunicorn_leaves_only_the_counts_its_workers_recorded(tmp_path: Path) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()
    env = child_env(
        PROMETHEUS_MULTIPROC_DIR=str(shared),
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )
    masters = []
    for _start in range(2):  # a deploy restarts it
        process, base = start_gunicorn(env, workers=2, args=("-c", "config/gunicorn.conf.py"))
        masters.append(process.pid)
        try:
            with urllib.request.urlopen(f"{base}/api/schema", timeout=30) as answer:
                assert answer.status == 200
        finally:
            stop_group(process, signal.SIGTERM)

    left = sorted(shared.iterdir())
    assert left, "the requests served were counted"
    assert not [p.name for p in left if int(p.stem.rsplit("_", 1)[1]) in masters]
    assert [p.name for p in left if not any(samples(p))] == []


# A master whose hooks meet a config.metrics other than the one they were written for: a
# SIGHUP after the code was switched reloads the config file, not the modules the master
# had loaded (the older process_ended took no pid).
OLDER_MASTER = """
import runpy

globals().update(runpy.run_path({conf!r}))
_on_starting = on_starting


def on_starting(server):
    _on_starting(server)
    from config import metrics

    metrics.process_ended = lambda: None
"""


def test_a_hook_that_fails_when_a_worker_dies_does_not_stop_the_server(tmp_path: Path) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()
    conf = tmp_path / "older_master.conf.py"
    conf.write_text(OLDER_MASTER.format(conf=str(ROOT / "config" / "gunicorn.conf.py")))
    env = child_env(
        PROMETHEUS_MULTIPROC_DIR=str(shared),
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )
    process, base = start_gunicorn(env, workers=2, args=("-c", str(conf)))
    try:
        first = sorted(descendants(process.pid))
        os.kill(first[0], signal.SIGKILL)

        wait_for(
            lambda: len(descendants(process.pid) - set(first)) >= 1,
            timeout=30,
            what="a worker started in place of the one killed",
        )
        assert process.poll() is None, "the master stopped"
        assert http_ok(f"{base}/healthz")
    finally:
        stop_group(process, signal.SIGTERM)
