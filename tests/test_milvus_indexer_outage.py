"""The worker's indexer through a Milvus outage: a real `qcluster` indexing into Milvus
Lite, the server stopped and started again under it. The indexer keeps running, tries
the server again every few seconds, says so once without a traceback, and says when it
answers again; a case written during the outage is indexed once it does."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django_q.models import Failure
from django_q.tasks import async_task

from caselibrary.models import CaseChange, CaseLibrary
from caselibrary.search_backends.milvus import MilvusBackend
from caselibrary.search_text import search_terms
from caselibrary.services.index import INDEX_GROUP, INDEX_TASK, case_indexer_running
from tests.factories import CaseLibraryFactory
from tests.milvus_server import milvus_lite_server
from tests.processes import ROOT, child_env, free_port, stop_group, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

OUTAGE = "search backend is unavailable"
BACK = "search backend answers again"
# The task's timeout: the indexer's runs last 4 s (two thirds of it), so that the outage
# below outlasts a few of them, each handing it to the next.
Q_TIMEOUT = 6


def log_lines(path: Path) -> list[dict]:
    """The worker's JSON log lines (gRPC writes lines of its own to stderr)."""
    lines = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            lines.append(entry)
    return lines


def indexed(case: CaseLibrary) -> bool:
    return not CaseChange.objects.filter(case_id=case.case_id).exists()


def test_the_indexer_rides_out_a_milvus_outage_and_indexes_the_case_written_meanwhile(
    tmp_path: Path, monkeypatch
) -> None:
    # Tasks go to the broker, for the worker: the suite otherwise runs them inline.
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    data, port = tmp_path / "milvus", free_port()
    collection = f"outage_{uuid.uuid4().hex[:8]}"
    worker_log = tmp_path / "qcluster.log"
    env = child_env(
        CASE_SEARCH_BACKEND="milvus",
        MILVUS_URI=f"http://127.0.0.1:{port}",
        MILVUS_COLLECTION=collection,
        MILVUS_TIMEOUT="3",
        Q_TIMEOUT=str(Q_TIMEOUT),
        Q_POLL="0.1",
        LOG_FORMAT="json",
    )
    log = worker_log.open("w")
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        with milvus_lite_server(data, port=port):
            async_task(INDEX_TASK, group=INDEX_GROUP)
            wait_for(case_indexer_running, timeout=120, what="the worker's indexer")
            before = CaseLibraryFactory(title="主从延迟", root_cause="大事务", solution="拆分")
            wait_for(lambda: indexed(before), timeout=120, what="the first case indexed")

        written = CaseLibraryFactory(title="证书过期", root_cause="证书未续期", solution="续期")
        wait_for(
            lambda: OUTAGE in worker_log.read_text() or "Traceback" in worker_log.read_text(),
            timeout=60,
            what="the indexer to meet the outage",
        )
        assert "Traceback" not in worker_log.read_text()
        time.sleep(Q_TIMEOUT * 2)  # Milvus stays down through a few runs
        # Still running: the lease is only free for the moment one run hands over.
        wait_for(case_indexer_running, timeout=Q_TIMEOUT, what="the indexer to run on")

        with milvus_lite_server(data, port=port) as uri:
            wait_for(lambda: indexed(written), timeout=120, what="the case written meanwhile")
            backend = MilvusBackend(uri=uri, collection=collection)
            found = backend.lexical(search_terms("证书过期"), 10)
            assert {pid.rpartition(":")[0] for pid, _ in found} == {written.case_id}
    finally:
        stop_group(worker)
        log.close()

    lines = log_lines(worker_log)
    warnings = [line for line in lines if line["level"] == "WARNING" and OUTAGE in line["message"]]
    assert len(warnings) == 1, warnings
    assert f"http://127.0.0.1:{port}" in warnings[0]["message"]
    assert "exception" not in warnings[0]
    assert any(BACK in line["message"] for line in lines)
    assert "Traceback" not in worker_log.read_text()
    assert not Failure.objects.exists()
