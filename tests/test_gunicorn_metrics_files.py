"""What gunicorn leaves in PROMETHEUS_MULTIPROC_DIR when it stops: the counts its workers
recorded, and nothing else. Its master loads the service to check it before the workers
start (config/gunicorn.conf.py), which made a counter and a histogram file of zeros
under the master's pid at every start; each scrape read them all."""

import signal
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.mmap_dict import MmapedDict

from tests.processes import child_env, start_gunicorn, stop_group

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
