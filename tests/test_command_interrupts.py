"""A command stopped by Ctrl-C (SIGINT) or by its supervisor (SIGTERM: systemd, a
Kubernetes Job) ends with one line saying so and what it had done, and the shell's
status for that signal; no traceback, no CRITICAL log line."""

import re
import signal
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from diagnosis.models import DiagnosisSession
from tests.processes import command_started, stop_group, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
]

SESSIONS = 3000


def old_sessions(count: int) -> None:
    DiagnosisSession.objects.bulk_create(
        DiagnosisSession(session_id=f"old-{n:05d}", user_id="ops", query="q") for n in range(count)
    )
    DiagnosisSession.objects.update(created_at=timezone.now() - timedelta(days=60))


def some_removed() -> bool:
    try:
        return DiagnosisSession.objects.count() < SESSIONS
    except OperationalError:  # the purge holds the write lock at this moment
        return False


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_purge_stopped_part_way_says_how_many_sessions_it_removed(sig, status) -> None:
    old_sessions(SESSIONS)
    purge = command_started("purge_sessions", "--older-than", "30d", "--batch", "1")
    try:
        wait_for(some_removed, timeout=60, what="the purge's first batches")
        purge.send_signal(sig)
        out, err = purge.communicate(timeout=60)
    finally:
        stop_group(purge)

    removed = SESSIONS - DiagnosisSession.objects.count()
    assert purge.returncode == status, err
    assert 0 < removed < SESSIONS
    said = re.fullmatch(r"Stopped\. At least (\d+) session\(s\) removed[^\n]*\n", err)
    assert said, err
    # A stop between a batch's commit and its count leaves that one batch (1) untold.
    assert removed - 1 <= int(said.group(1)) <= removed
    assert "CRITICAL" not in out + err
    assert "Traceback" not in err
