"""An age too large to subtract from today is refused by name, on the command line and in
SESSION_RETENTION_DAYS (tests/test_settings_validation.py), never an OverflowError."""

import io
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from feedback.retention import sessions_purge_scheduled
from tests.processes import ROOT, child_env
from tests.test_purge_sessions import aged, remaining

pytestmark = pytest.mark.django_db

CENTURY = 36500  # days: the longest age a purge takes


def purge(*args: str) -> str:
    out = io.StringIO()
    call_command("purge_sessions", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("age", ["800000d", "99999999999d", "36501d", f"{CENTURY * 24 + 1}h"])
def test_an_older_than_beyond_a_century_is_refused_naming_the_argument(age: str) -> None:
    aged("ancient", 400, succeeded=True)

    with pytest.raises(CommandError, match=rf"^--older-than must be at most 36500d .*'{age}'"):
        purge("--older-than", age)

    assert remaining() == {"ancient"}


@pytest.mark.parametrize("age", [f"{CENTURY}d", f"{CENTURY * 24}h"])
def test_an_older_than_of_a_century_is_taken(age: str) -> None:
    assert purge("--older-than", age, "--dry-run").startswith("0 session(s) created before ")


def test_the_scheduled_purge_at_the_longest_retention_runs(settings) -> None:
    settings.SESSION_RETENTION_DAYS = CENTURY
    aged("kept", 400, succeeded=True)

    assert sessions_purge_scheduled() == 0
    assert remaining() == {"kept"}


def test_purge_sessions_help_gives_the_limit() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "purge_sessions", "--help"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert "at most 36500d" in " ".join(result.stdout.split())
