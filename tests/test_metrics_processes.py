"""GET /metrics across processes: gunicorn and qcluster workers adding up in one scrape,
and the directory of their sample files."""

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.mmap_dict import MmapedDict

from tests import metrics_samples
from tests.metrics_samples import parse, scrape, value
from tests.processes import ROOT, child_env, start_gunicorn, stop_group, wait_for

pytestmark = pytest.mark.django_db

# Fixtures shared with the other modules, taken by name.
fresh_broker_log = metrics_samples.fresh_broker_log


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_workers_of_gunicorn_and_qcluster_add_up_in_one_scrape(tmp_path, api) -> None:
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    env = child_env(PROMETHEUS_MULTIPROC_DIR=str(multiproc), Q_POLL="0.1")
    key = api.raw_key
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    web, base = start_gunicorn(env, workers=2)
    try:
        headers = {"Authorization": f"Api-Key {key}", "Content-Type": "application/json"}
        requests = 40
        for n in range(requests):
            body = json.dumps({"sessionId": f"mp-{n}", "query": "q"}).encode()
            urllib.request.urlopen(
                urllib.request.Request(f"{base}/api/sessions", data=body, headers=headers),
                timeout=30,
            ).close()
        for n in range(5):
            body = json.dumps({"status": "SUCCESS", "answer": "a"}).encode()
            urllib.request.urlopen(
                urllib.request.Request(
                    f"{base}/api/sessions/mp-{n}/complete", data=body, headers=headers
                ),
                timeout=30,
            ).close()

        def read() -> dict:
            with urllib.request.urlopen(f"{base}/metrics", timeout=30) as response:
                return parse(response.read().decode())

        # The qcluster's workers score the five; their samples join the web workers'.
        wait_for(
            lambda: value(read(), "diagnosis_evidence_score_count") == 5,
            timeout=60,
            what="the worker's score samples in the scrape",
        )
        samples = read()
        created = value(
            samples,
            "diagnosis_http_requests_total",
            route="session-list",
            method="POST",
            status="201",
        )
        pids = {p.name.split("_")[-1] for p in multiproc.glob("*.db")}
    finally:
        stop_group(web)
        stop_group(worker)

    assert created == requests  # both gunicorn workers' counts, added up
    assert value(samples, "diagnosis_sessions_completed_total", status="SUCCESS") == 5
    assert len(pids) >= 3  # two web workers and at least one task worker wrote samples


def test_a_sample_file_a_starting_process_has_not_sized_yet_does_not_break_the_scrape(
    tmp_path, monkeypatch
) -> None:
    # prometheus_client creates a process's file empty and sizes it after: a scrape at that
    # moment (or a process killed in it, e.g. a recycled worker) found an empty file.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    samples = MmapedDict(str(tmp_path / "counter_101.db"))
    key = json.dumps(["probe_events", "probe_events_total", {}, "Events."], sort_keys=True)
    samples.write_value(key, 3.0, 0.0)
    samples.close()
    (tmp_path / "counter_102.db").write_bytes(b"")

    assert value(scrape(), "probe_events_total") == 3.0


def test_devserver_starts_the_web_and_worker_on_an_emptied_metrics_directory(
    settings, monkeypatch
) -> None:
    from diagnosis.management.commands.devserver import _fresh_metrics_dir

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    earlier = Path(settings.VAR_DIR) / "prometheus"
    earlier.mkdir(parents=True, exist_ok=True)
    (earlier / "counter_4242.db").write_bytes(b"an earlier run's samples")

    directory = _fresh_metrics_dir()

    assert directory == earlier
    assert list(directory.iterdir()) == []


def test_a_configured_metrics_directory_loses_only_its_sample_files(tmp_path, monkeypatch) -> None:
    from diagnosis.management.commands.devserver import _fresh_metrics_dir

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    (tmp_path / "histogram_77.db").write_bytes(b"old")
    (tmp_path / "notes.txt").write_text("someone else's")

    assert _fresh_metrics_dir() == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize(
    ("workers", "shared", "warned"),
    [(2, False, True), (2, True, False), (1, False, False)],
    ids=["two-workers-no-directory", "two-workers-a-directory", "one-worker"],
)
def test_gunicorn_warns_at_start_up_when_its_workers_would_each_count_alone(
    tmp_path, workers: int, shared: bool, warned: bool
) -> None:
    extra = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus")} if shared else {}
    env = child_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", **extra)
    log_path = tmp_path / "gunicorn.log"
    with log_path.open("w") as log:
        web, _ = start_gunicorn(
            env, workers=workers, log=log, args=("-c", "config/gunicorn.conf.py")
        )
        stop_group(web)

    warnings = [
        line
        for line in log_path.read_text().splitlines()
        if '"level": "WARNING"' in line and "PROMETHEUS_MULTIPROC_DIR" in line
    ]
    assert len(warnings) == (1 if warned else 0), log_path.read_text()
