"""An exception nothing catches ends a process of the service with one JSON line (CRITICAL,
the exception's class, message and traceback) and a non-zero status when LOG_FORMAT is
json: a log collector reading JSON lines gets no 30 lines of plain text. With
LOG_FORMAT=plain, Python's own traceback stays."""

import json
import subprocess
import sys

import pytest

from tests.processes import child_env, free_port, run_until_it_exits

pytestmark = pytest.mark.integration


def run(command: list[str], **env: str) -> subprocess.CompletedProcess:
    return run_until_it_exits([sys.executable, "manage.py", *command], env=child_env(**env))


def json_lines(result: subprocess.CompletedProcess) -> list[dict]:
    lines = (result.stdout + result.stderr).splitlines()
    for line in lines:
        assert line.startswith("{"), result.stdout + result.stderr
    return [json.loads(line) for line in lines]


@pytest.mark.slow
def test_qcluster_without_its_broker_ends_in_json_lines_only() -> None:
    result = run(["qcluster"], LOG_FORMAT="json", Q_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")

    assert result.returncode != 0
    critical = [line for line in json_lines(result) if line["level"] == "CRITICAL"]
    # Once, though the worker sets its logging up twice (config.wsgi is imported too).
    assert len([line for line in critical if "failed to start" in line["message"]]) == 1
    assert all("Traceback" in line["exception"] for line in critical)


def test_an_uncaught_exception_of_a_command_is_one_critical_json_line() -> None:
    result = run(
        ["shell", "--no-imports", "-c", "raise RuntimeError('the disk is full')"], LOG_FORMAT="json"
    )

    assert result.returncode != 0
    [line] = json_lines(result)
    assert line["level"] == "CRITICAL"
    assert line["message"] == "Uncaught RuntimeError: the disk is full"
    assert line["exception"].startswith("Traceback (most recent call last):")
    assert line["exception"].endswith("RuntimeError: the disk is full")


def test_an_uncaught_exception_of_a_thread_is_one_critical_json_line() -> None:
    code = (
        "import threading\n"
        "def work(): raise ValueError('bad row')\n"
        "thread = threading.Thread(target=work, name='importer'); thread.start(); thread.join()"
    )

    result = run(["shell", "--no-imports", "-c", code], LOG_FORMAT="json")

    [line] = json_lines(result)
    assert line["level"] == "CRITICAL"
    assert line["message"] == "Uncaught ValueError in thread importer: bad row"
    assert line["exception"].endswith("ValueError: bad row")


def test_with_plain_logs_python_prints_its_own_traceback() -> None:
    result = run(
        ["shell", "--no-imports", "-c", "raise RuntimeError('the disk is full')"],
        LOG_FORMAT="plain",
    )

    assert result.returncode != 0
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.rstrip().endswith("RuntimeError: the disk is full")
