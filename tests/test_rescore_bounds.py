"""rescore --since/--until take the days a session can have: one at the very end of the
calendar is refused naming the argument, not an OverflowError."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def rescore(*args: str) -> str:
    out = io.StringIO()
    call_command("rescore", *args, "--no-progress", stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.parametrize(
    ("argument", "day"),
    [("--until", "9999-12-31"), ("--since", "9999-12-31"), ("--since", "0001-01-01")],
)
def test_a_day_at_the_end_of_the_calendar_is_refused_naming_the_argument(
    argument: str, day: str
) -> None:
    with pytest.raises(
        CommandError,
        match=rf"argument {argument}: {day} is not a day from 1900-01-01 to 9999-12-30",
    ):
        rescore(argument, day)


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "America/Los_Angeles"])
def test_the_widest_range_it_takes_works_in_any_time_zone(settings, zone: str) -> None:
    settings.TIME_ZONE = zone
    DiagnosisSessionFactory(succeeded=True)

    out = rescore("--since", "1900-01-01", "--until", "9999-12-30")

    assert out.startswith("Scored 1 session(s) in ")
