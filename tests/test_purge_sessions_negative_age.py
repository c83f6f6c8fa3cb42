"""purge_sessions with a negative --older-than ("-5d", a typo or a script's arithmetic
gone wrong): the command's own message, nothing removed, a non-zero status. argparse alone
would read "-5d" as an option and say only "expected one argument"."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.test_commands import assert_one_line_failure, manage
from tests.test_purge_sessions import aged


@pytest.mark.django_db
@pytest.mark.parametrize("age", ["-5d", "-36h", "-0d"])
def test_a_negative_age_is_refused_by_the_command_removing_nothing(age: str) -> None:
    aged("old-silent", 200, succeeded=True)

    with pytest.raises(CommandError) as refused:
        call_command("purge_sessions", "--older-than", age)

    assert str(refused.value) == (
        f'--older-than wants a number of days or hours, e.g. "180d", got {age!r}: '
        "an age is never negative"
    )
    assert DiagnosisSession.objects.filter(session_id="old-silent").exists()


@pytest.mark.django_db(transaction=True)
def test_a_negative_age_from_the_command_line_is_one_line_and_a_failure() -> None:
    DiagnosisSessionFactory(session_id="kept")

    result = manage("purge_sessions", "--older-than", "-5d")

    assert_one_line_failure(result, "got '-5d': an age is never negative")
    assert DiagnosisSession.objects.filter(session_id="kept").exists()
