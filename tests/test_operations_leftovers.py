"""What running the service leaves behind: metrics files of finished commands, a second
Ctrl-C on `make run`, the index status of a library without searchable text, error codes
too long for their column, and the MariaDB-only index the database check must know."""

import io
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from prometheus_client import mmap_dict
from prometheus_client.parser import text_string_to_metric_families

from caselibrary.models import CaseLibrary
from caselibrary.services.cases import case_create_from_session
from caselibrary.services.index import case_index_build
from caselibrary.services.proposals import cases_structure_new
from diagnosis.models import DiagnosisSession
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, ToolInvocationFactory
from tests.processes import ROOT, alive, child_env, descendants, free_port, stop_group, wait_for

# --- 1. Metrics files of management commands -------------------------------------------


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def scrape() -> dict[tuple[str, tuple], float]:
    response = Client().get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200, response.content
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


@pytest.mark.slow
@pytest.mark.django_db
def test_a_command_that_records_nothing_leaves_nothing_in_the_metrics_directory(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()

    for _run in range(3):  # a command cron runs every minute
        result = manage("check", PROMETHEUS_MULTIPROC_DIR=str(shared))
        assert result.returncode == 0, result.stderr

    assert sorted(p.name for p in shared.iterdir()) == []


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_what_a_command_records_stays_in_the_scrape_after_it_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()
    session = DiagnosisSessionFactory(succeeded=True)
    ToolInvocationFactory(session=session)

    result = manage("rescore", "--all", "--no-progress", PROMETHEUS_MULTIPROC_DIR=str(shared))
    assert result.returncode == 0, result.stderr

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(shared))
    assert scrape()[("diagnosis_evidence_score_count", ())] == 1.0


@pytest.mark.django_db
def test_a_scrape_answers_when_a_finished_process_removes_its_file_during_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = mmap_dict.MmapedDict(str(tmp_path / "counter_101.db"))
    kept.write_value('["probe", "probe_total", {}, "Events."]', 3.0, 0.0)
    kept.close()
    mmap_dict.MmapedDict(str(tmp_path / "counter_102.db")).close()  # a process of zeros
    read = mmap_dict.MmapedDict.read_all_values_from_file

    def removed_as_it_is_read(path: str):  # type: ignore[no-untyped-def]
        # The process behind counter_102 exits between the listing and this read.
        if path.endswith("counter_102.db") and os.path.exists(path):
            os.remove(path)
        return read(path)

    monkeypatch.setattr(mmap_dict.MmapedDict, "read_all_values_from_file", removed_as_it_is_read)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))

    assert scrape()[("probe_total", ())] == 3.0


# --- 2. A second Ctrl-C on `make run` --------------------------------------------------


class Stream:
    """What a process writes to one of its pipes, read as it comes."""

    def __init__(self, pipe: io.TextIOBase) -> None:
        self.lines: list[str] = []
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe: io.TextIOBase) -> None:
        for line in pipe:
            self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines)


def _sigint_as_a_terminal_has_it() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.integration
@pytest.mark.slow
def test_a_second_ctrl_c_on_make_run_stops_everything_without_a_traceback(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "Q_SYNC", "SECRET_KEY", "DEBUG", "MAKEFLAGS", "MFLAGS"}
    }
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", Q_SYNC="0")
    make = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_sigint_as_a_terminal_has_it,
    )
    out, err = Stream(make.stdout), Stream(make.stderr)
    try:
        wait_for(lambda: re.search(r"password:\s+\S+", out.text()), timeout=180, what="start-up")
        processes = descendants(make.pid) | {make.pid}

        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C
        wait_for(lambda: "Stopping" in out.text(), timeout=30, what="the stop to begin")
        os.killpg(make.pid, signal.SIGINT)  # and Ctrl-C again, while it stops
        make.wait(timeout=60)
        wait_for(lambda: not alive(processes), timeout=20, what="every process to stop")
    finally:
        stop_group(make, signal.SIGKILL)

    assert "Traceback" not in err.text(), err.text()
    assert "KeyboardInterrupt" not in err.text(), err.text()


# --- 3. The index status of a library without searchable text ------------------------


@pytest.mark.django_db
def test_the_index_status_says_the_index_is_built_when_no_case_has_searchable_text() -> None:
    CaseLibraryFactory(title="…", root_cause="?!", solution="1. 2.", error_code=None)
    case_index_build()
    out = io.StringIO()

    call_command("case_index", stdout=out)

    said = out.getvalue()
    assert "Nothing is indexed yet" not in said
    assert "The index is built and holds 0 searchable passages" in said


# --- 4. Error codes longer than their column --------------------------------------------

LONG_CLASS = "com.example.payments.gateway.internal.ConnectionPoolExhaustedTimeoutException"


@pytest.mark.django_db
def test_a_code_longer_than_the_column_is_not_taken_and_the_next_code_is() -> None:
    assert len(LONG_CLASS) > 64
    DiagnosisSessionFactory(
        succeeded=True,
        session_id="long-code-1",
        query=f"支付回调失败，日志里是 {LONG_CLASS}",
        answer="根因：连接池耗尽，下游返回 HTTP 503。扩容连接池。",
    )
    DiagnosisSessionFactory(
        succeeded=True,
        session_id="long-code-2",
        query=f"支付回调失败，日志里是 {LONG_CLASS}",
        answer="扩容连接池。",
    )

    with_next = case_create_from_session(
        session=DiagnosisSession.objects.get(session_id="long-code-1")
    )
    alone = case_create_from_session(session=DiagnosisSession.objects.get(session_id="long-code-2"))
    cases_structure_new()

    assert CaseLibrary.objects.get(pk=with_next.pk).error_code == "HTTP 503"
    assert CaseLibrary.objects.get(pk=alone.pk).error_code is None


# --- 5. The MariaDB-only index in the database check -----------------------------------

FEEDBACK_INDEX = "idx_session_feedback_scored"


def database_check() -> str:
    out = io.StringIO()
    try:
        call_command("check", databases=["default"], stdout=out, stderr=out)
    except Exception as exc:  # an Error stops the command: its text is the report
        return str(exc)
    return out.getvalue()


@pytest.mark.sqlite
@pytest.mark.django_db(transaction=True)
def test_on_sqlite_the_check_asks_for_no_mariadb_only_index() -> None:
    report = database_check()

    assert FEEDBACK_INDEX not in report
    assert "diagnosis_session has no index" not in report


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_on_mariadb_a_missing_feedback_index_is_named_with_the_statement_that_creates_it() -> None:
    if not connection.mysql_is_mariadb:
        pytest.skip("MySQL 8 cannot index a JSON column by prefix: the index is MariaDB's")
    assert FEEDBACK_INDEX not in database_check()
    # SQL by hand: the index is MariaDB's alone (a prefix of a JSON column, which the ORM
    # cannot declare; diagnosis.0005 makes it the same way), and the statement the check
    # hints is what an operator runs.
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {FEEDBACK_INDEX} ON diagnosis_session")
    try:
        report = database_check()

        assert (
            "diagnosis_session has no index on (feedback, self_evaluation(1), created_at)" in report
        )
        hint = next(line for line in report.splitlines() if FEEDBACK_INDEX in line)
        statement = hint.split("HINT:", 1)[1].strip()
        with connection.cursor() as cursor:
            cursor.execute(statement)
        assert FEEDBACK_INDEX not in database_check()
    finally:
        with connection.cursor() as cursor:
            present = connection.introspection.get_constraints(cursor, "diagnosis_session")
            if FEEDBACK_INDEX not in present:
                cursor.execute(
                    f"CREATE INDEX {FEEDBACK_INDEX} ON diagnosis_session"
                    " (feedback, self_evaluation(1), created_at)"
                )
