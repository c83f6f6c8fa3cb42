"""The exports' --output file: replaced only by a complete export, and their standard
output piped into a reader that stops early."""

import io
import json
import os
import stat
import subprocess
import sys

import pytest
from django.core.management import call_command

from tests.factories import CaseLibraryFactory
from tests.processes import ROOT, child_env

pytestmark = pytest.mark.django_db

EXPORTS = {
    "export_cases": ("export_cases", "-o"),
    "export": ("export", "cases", "--output"),
}


def run(command: tuple[str, ...], target: object, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *command, str(target)],
        cwd=ROOT,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_an_export_that_cannot_read_the_database_leaves_the_last_file_as_it_was(
    name, tmp_path
) -> None:
    target = tmp_path / "nightly.out"
    target.write_text("last night's export\n")

    ended = run(EXPORTS[name], target, DATABASE_URL=f"sqlite:///{tmp_path}/gone/db.sqlite3")

    assert ended.returncode == 1, ended.stderr
    assert "The database is not ready" in ended.stderr
    assert target.read_text() == "last night's export\n"
    assert os.listdir(tmp_path) == ["nightly.out"]


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_a_complete_export_replaces_the_file_and_keeps_its_permissions(name, tmp_path) -> None:
    CaseLibraryFactory.create_batch(2, title="Pool exhausted")
    target = tmp_path / "nightly.out"
    target.write_text("last night's export\n")
    target.chmod(0o640)

    call_command(*EXPORTS[name], str(target), stdout=io.StringIO())

    assert "last night" not in target.read_text()
    assert target.read_text().count("Pool exhausted") == 2
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["nightly.out"]


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_a_new_export_file_gets_the_usual_permissions_of_a_new_file(name, tmp_path) -> None:
    CaseLibraryFactory()
    target = tmp_path / "first.out"
    umask = os.umask(0o027)
    try:
        call_command(*EXPORTS[name], str(target), stdout=io.StringIO())
    finally:
        os.umask(umask)

    assert stat.S_IMODE(target.stat().st_mode) == 0o640


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_export_cases_piped_into_head_ends_quietly() -> None:
    # Well over what a pipe buffers, so the export is still writing when head stops.
    CaseLibraryFactory.create_batch(40, root_cause="连接池耗尽。" * 400)

    export = subprocess.Popen(
        [sys.executable, "manage.py", "export_cases"],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    head = subprocess.run(
        ["head", "-1"], stdin=export.stdout, capture_output=True, text=True, timeout=120
    )
    export.stdout.close()  # type: ignore[union-attr]  # head's alone holds the pipe now
    stderr = export.stderr.read()  # type: ignore[union-attr]

    assert export.wait(timeout=120) == 0, stderr
    assert stderr == ""
    assert json.loads(head.stdout)["rootCause"].startswith("连接池耗尽。")
