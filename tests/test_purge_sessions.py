"""purge_sessions and the daily retention schedule."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from django.utils import timezone
from django_q.models import Schedule

from diagnosis.models import DiagnosisSession, ToolInvocation
from feedback.retention import sessions_purge
from feedback.tasks import sessions_purge_task
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    ToolInvocationFactory,
)

pytestmark = pytest.mark.django_db


def aged(session_id: str, days: int, **kwargs: object) -> DiagnosisSession:
    session = DiagnosisSessionFactory(session_id=session_id, **kwargs)
    DiagnosisSession.objects.filter(pk=session.pk).update(
        created_at=timezone.now() - timedelta(days=days)
    )
    return session


@pytest.fixture
def history():  # type: ignore[no-untyped-def]
    for n in range(7):
        ToolInvocationFactory.create_batch(3, session=aged(f"old-silent-{n}", 200, succeeded=True))
    aged("old-running", 400)
    aged("old-useful", 200, useful=True)
    aged("old-bad", 200, not_useful=True)
    aged("old-with-case", 200, succeeded=True)
    CaseLibraryFactory(diagnosis_id="old-with-case")
    aged("recent", 10, succeeded=True)


def remaining() -> set[str]:
    return set(DiagnosisSession.objects.values_list("session_id", flat=True))


def purge(*args: str) -> str:
    out = io.StringIO()
    call_command("purge_sessions", *args, stdout=out)
    return out.getvalue()


def test_old_sessions_without_feedback_or_case_go_with_their_facts(history) -> None:
    out = purge("--older-than", "180d", "--batch", "3")

    assert out.startswith("8 session(s) created before ")
    assert remaining() == {"old-useful", "old-bad", "old-with-case", "recent"}
    assert not ToolInvocation.objects.exists()


def test_dry_run_says_what_would_go_and_removes_nothing(history) -> None:
    out = purge("--older-than", "180d", "--dry-run")

    assert "8 session(s) created before" in out and "would be removed" in out
    assert len(remaining()) == 12
    assert ToolInvocation.objects.count() == 21


def test_an_age_in_hours_counts_back_hours_not_days(history) -> None:
    assert "12 session(s)" not in purge("--older-than", "24h", "--dry-run")
    assert purge("--older-than", "24h", "--dry-run").startswith("9 session(s)")


@pytest.mark.parametrize("age", ["180", "0d", "six months", "-3d"])
def test_a_bad_age_is_one_clear_error(age) -> None:
    with pytest.raises(CommandError, match="--older-than wants a number of days or hours"):
        call_command("purge_sessions", f"--older-than={age}")


@pytest.mark.parametrize("age", ["0d", "0h"])
def test_an_age_of_nothing_says_the_least_it_takes(age) -> None:
    with pytest.raises(CommandError, match="at least 1h"):
        call_command("purge_sessions", f"--older-than={age}")


def test_the_help_says_what_older_than_takes_and_what_it_removes() -> None:
    parser = load_command_class("feedback", "purge_sessions").create_parser(
        "manage.py", "purge_sessions"
    )
    text = " ".join(parser.format_help().split())

    option = text.split("--older-than AGE ", 1)[1].split(" --dry-run", 1)[0]
    assert '"180d"' in option and '"36h"' in option
    assert "no feedback and no case" in option


def test_the_daily_schedule_exists_and_does_nothing_unless_configured(history, settings) -> None:
    schedule = Schedule.objects.get(name="session-retention")
    assert (schedule.func, schedule.schedule_type) == ("feedback.tasks.sessions_purge_task", "D")

    settings.SESSION_RETENTION_DAYS = 0
    assert sessions_purge_task() is None
    assert len(remaining()) == 12

    settings.SESSION_RETENTION_DAYS = 180
    assert sessions_purge_task() == 8
    assert len(remaining()) == 4


def test_a_session_rated_between_batches_stays(history) -> None:
    # The rule is checked again in each batch's transaction.
    DiagnosisSession.objects.filter(session_id="old-silent-6").update(feedback="not_useful")

    assert sessions_purge(older_than=timedelta(days=180), batch=2).sessions == 7
    assert "old-silent-6" in remaining()
