"""The sample files of processes that ended, folded into one archive per type: the
directory holds the archive and the files of the processes alive, and no scrape reads a
total lower than an earlier one."""

import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from prometheus_client.mmap_dict import MmapedDict

from config import metrics
from tests import metrics_samples
from tests.metrics_samples import scrape, value
from tests.processes import ROOT, child_env

pytestmark = pytest.mark.django_db

fresh_broker_log = metrics_samples.fresh_broker_log

# A process of the service that counts, says so, and ends when its stdin closes (a
# recycled queue worker ends without running manage.py's exit hook).
COUNTING = """
import sys

import django

django.setup()
from config import metrics

for _ in range(int(sys.argv[1])):
    metrics.request_observed(route="case-search", method="GET", status=200, seconds=0.5)
    metrics.session_completed("SUCCESS")
    metrics.score_written(45)
print("counted", flush=True)
sys.stdin.readline()
"""

COUNTED = (
    "diagnosis_http_requests_total",
    "diagnosis_http_request_duration_seconds",
    "diagnosis_sessions_completed_total",
    "diagnosis_evidence_score",
)


def counting(directory: Path, times: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", COUNTING, str(times)],
        cwd=ROOT,
        env=child_env(PROMETHEUS_MULTIPROC_DIR=str(directory)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return process


def counted(process: subprocess.Popen) -> None:
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "counted"


def ended(process: subprocess.Popen) -> None:
    process.communicate("", timeout=60)
    assert process.returncode == 0


def counts(samples: dict) -> dict:
    return {key: v for key, v in samples.items() if key[0].startswith(COUNTED)}


@pytest.mark.integration
@pytest.mark.slow
def test_the_files_of_processes_that_ended_become_one_archive_with_the_same_totals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    ending = [counting(tmp_path, times) for times in (1, 2, 3, 4)]
    staying = counting(tmp_path, 5)
    try:
        for process in [*ending, staying]:
            counted(process)
        before = counts(scrape())
        staying_files = {p.name: p.read_bytes() for p in tmp_path.glob(f"*_{staying.pid}.db")}
        for process in ending:
            ended(process)

        after = counts(scrape())

        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["counter_0.db", "histogram_0.db", f"pid_{staying.pid}.lock", *staying_files]
        )
        assert {p: (tmp_path / p).read_bytes() for p in staying_files} == staying_files
        assert after == before
        assert (
            value(
                after,
                "diagnosis_http_requests_total",
                route="case-search",
                method="GET",
                status="200",
            )
            == 15
        )
        assert value(after, "diagnosis_evidence_score_bucket", le="50.0") == 15
        assert (
            value(
                after,
                "diagnosis_http_request_duration_seconds_sum",
                route="case-search",
                method="GET",
            )
            == 7.5
        )
    finally:
        ended(staying)


@pytest.mark.integration
@pytest.mark.slow
def test_a_worker_gunicorn_saw_exit_is_folded_into_the_archive_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    worker = counting(tmp_path, 3)
    counted(worker)
    ended(worker)

    metrics.process_ended(worker.pid)  # gunicorn's child_exit hook

    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter_0.db", "histogram_0.db"]
    samples = scrape()
    assert value(samples, "diagnosis_sessions_completed_total", status="SUCCESS") == 3
    assert value(samples, "diagnosis_evidence_score_count") == 3


# No process has a pid at or above PID_MAX_LIMIT (2**22): these stand for ended processes.
ENDED_PID = 2**22
PROBE = json.dumps(["probe", "probe_total", {}, "Events."], sort_keys=True)
PROBE_BUCKET = json.dumps(["probe_seconds", "probe_seconds_bucket", {"le": "1.0"}, "S."])
PROBE_SUM = json.dumps(["probe_seconds", "probe_seconds_sum", {}, "S."])


def ended_process_files(directory: Path, pid: int) -> None:
    # Whole when they appear, as the files of a process that ended are.
    for typ, values in (("counter", {PROBE: 1.0}), ("histogram", {PROBE_BUCKET: 1, PROBE_SUM: 2})):
        written = directory / f"{typ}_{pid}.db.written"
        samples = MmapedDict(str(written))
        for key, number in values.items():
            samples.write_value(key, float(number), 0.0)
        samples.close()
        written.rename(directory / f"{typ}_{pid}.db")


def test_a_scrape_during_compactions_never_reads_a_lower_total(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from config.metrics_compaction import compact_ended

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    processes = 60
    scraped = threading.Semaphore(0)
    done = threading.Event()
    failures: list[BaseException] = []

    def processes_ending() -> None:
        try:
            for n in range(processes):
                scraped.acquire(timeout=30)  # at least one scrape between compactions
                ended_process_files(tmp_path, ENDED_PID + n)
                compact_ended(str(tmp_path), wait_seconds=10)
        except BaseException as exc:  # reported by the test's thread
            failures.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=processes_ending)
    thread.start()
    reads = []
    while not done.is_set():
        samples = scrape()
        reads.append(
            (
                value(samples, "probe_total"),
                value(samples, "probe_seconds_bucket", le="1.0"),
                value(samples, "probe_seconds_count"),
                value(samples, "probe_seconds_sum"),
            )
        )
        scraped.release()
    thread.join()
    samples = scrape()

    assert failures == []
    for earlier, later in itertools.pairwise(reads):
        assert all(b >= a for a, b in zip(earlier, later, strict=True)), (earlier, later)
    assert value(samples, "probe_total") == processes
    assert value(samples, "probe_seconds_sum") == 2 * processes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter_0.db", "histogram_0.db"]


class Killed(BaseException):
    """The process compacting is killed at this point."""


def test_a_compaction_killed_before_it_removed_the_files_it_archived_counts_them_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from config.metrics_compaction import compact_ended

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    ended_process_files(tmp_path, ENDED_PID)
    remove = os.remove

    def killed_at_the_first_sample_file(path: str) -> None:
        if path.endswith(f"_{ENDED_PID}.db"):
            raise Killed
        remove(path)

    with monkeypatch.context() as kill, pytest.raises(Killed):
        kill.setattr(os, "remove", killed_at_the_first_sample_file)
        compact_ended(str(tmp_path))

    samples = scrape()

    assert value(samples, "probe_total") == 1
    assert value(samples, "probe_seconds_count") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter_0.db", "histogram_0.db"]
