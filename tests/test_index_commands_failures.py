"""The indexing commands when the run cannot go on: a Milvus server that does not answer
ends `case_index --build` and `reindex_cases` with one line naming it; Ctrl-C stops
`reindex_cases` with one line saying a next run goes on; and that next run queues no case
already waiting."""

import json
import signal
import subprocess
import sys
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from caselibrary.embedding import EMBEDDING_MODEL
from caselibrary.models import CaseChange, CaseIndexState, CasePassage
from caselibrary.search_backends import base
from caselibrary.services.index import case_index_build, cases_mark_for_reindex
from tests.factories import CaseLibraryFactory
from tests.processes import ROOT, child_env, command_started, free_port, stop_group


@pytest.fixture
def milvus_unreachable(settings, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    """CASE_SEARCH_BACKEND=milvus with nothing listening at MILVUS_URI; the URI."""
    settings.CASE_SEARCH_BACKEND = "milvus"
    settings.MILVUS_URI = f"http://127.0.0.1:{free_port()}"
    settings.MILVUS_TIMEOUT = 1
    monkeypatch.setattr(base, "_instances", {})  # the backend is made with these settings
    return settings.MILVUS_URI


@pytest.mark.django_db
@pytest.mark.parametrize("command", [("case_index", "--build"), ("reindex_cases", "--all")])
def test_an_index_command_with_the_milvus_server_unreachable_ends_with_one_line_naming_it(
    milvus_unreachable, command
) -> None:
    CaseLibraryFactory.create_batch(2)

    with pytest.raises(CommandError) as raised:
        call_command(*command)

    message = str(raised.value)
    assert "Milvus" in message and milvus_unreachable.rpartition(":")[2] in message
    assert "\n" not in message and "Traceback" not in message
    assert CaseChange.objects.count() == 2  # still waiting, for the next run


# --- Ctrl-C -----------------------------------------------------------------------------

REINDEX = [sys.executable, "manage.py", "reindex_cases", "--all"]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_reindex_cases_stopped_by_ctrl_c_says_a_next_run_goes_on_and_exits_130() -> None:
    CaseLibraryFactory.create_batch(3)
    case_index_build()
    # A worker's indexer holds the lease: the command marks the cases and waits for it.
    CaseIndexState.objects.filter(id=1).update(building_since=timezone.now() + timedelta(days=1))
    process = command_started(*REINDEX[2:])
    try:
        first = process.stdout.readline()  # type: ignore[union-attr]
        assert "waiting for it" in first
        process.send_signal(signal.SIGINT)  # what Ctrl-C sends
        out, err = process.communicate(timeout=30)
    finally:
        stop_group(process)

    assert process.returncode == 130
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Stopped" in lines[0] and "reindex_cases again" in lines[0]
    assert "CRITICAL" not in out + err and "Traceback" not in out + err


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_reindex_cases_with_the_milvus_server_unreachable_exits_1_with_one_line() -> None:
    CaseLibraryFactory.create_batch(2)
    env = child_env(CASE_SEARCH_BACKEND="milvus", MILVUS_URI=f"http://127.0.0.1:{free_port()}")
    env["MILVUS_TIMEOUT"] = "1"

    done = subprocess.run(REINDEX, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("CommandError: "), done.stderr
    assert "Milvus" in lines[0]
    logged = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert not [record for record in logged if record.get("level") == "CRITICAL"]


# --- A run again goes on ----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("everything", [True, False])
def test_a_reindex_run_again_queues_no_case_already_waiting(everything, capsys) -> None:
    CaseLibraryFactory.create_batch(3)
    case_index_build()
    CasePassage.objects.update(model="an-older-model")  # as after a model upgrade
    # A first run stopped before the indexer took any of the cases it marked.
    assert cases_mark_for_reindex(everything=everything) == 3

    assert cases_mark_for_reindex(everything=everything) == 0
    assert CaseChange.objects.count() == 3
    call_command("reindex_cases", *(["--all"] if everything else []))

    assert "Re-indexed 3 case(s)" in capsys.readouterr().out
    assert not CaseChange.objects.exists()
    assert set(CasePassage.objects.values_list("model", flat=True)) == {EMBEDDING_MODEL}
