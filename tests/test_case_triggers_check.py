"""A restore that lost the case library's triggers (a dump made with --skip-triggers, or
loaded by a user the server would not let create them): every edit after it would go
unindexed. `check --database default` warns, naming the triggers missing and saying that
`migrate` makes them again; `migrate` itself is not stopped by it, and does."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection

from caselibrary.models import CaseChange
from caselibrary.triggers import existing
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db(transaction=True)

CHANGE_TRIGGERS = ("case_library_change_ins", "case_library_change_upd_ids")


def database_check() -> str:
    out = io.StringIO()
    try:
        call_command("check", databases=["default"], stdout=out, stderr=out)
    except SystemCheckError as exc:  # an error would stop the command: its text is the report
        return str(exc)
    return out.getvalue()


def drop_triggers(*names: str) -> None:
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(f"DROP TRIGGER {name}")


@pytest.fixture
def triggers_made_again():  # type: ignore[no-untyped-def]
    yield
    if not set(CHANGE_TRIGGERS) <= existing(connection):
        call_command("migrate", verbosity=0)


def test_the_database_check_names_the_case_triggers_a_restore_left_out(
    triggers_made_again,
) -> None:
    drop_triggers(*CHANGE_TRIGGERS)

    report = database_check()

    assert "database.W006" in report
    assert all(name in report for name in CHANGE_TRIGGERS)
    assert "case_library_change_del" not in report
    assert "manage.py migrate" in report


def test_the_database_check_finds_nothing_to_say_of_complete_triggers() -> None:
    assert "database.W006" not in database_check()


def test_migrate_is_not_stopped_by_the_missing_triggers_and_makes_them_again(
    triggers_made_again,
) -> None:
    drop_triggers(*CHANGE_TRIGGERS)

    call_command("migrate", verbosity=0, skip_checks=False)  # as `manage.py migrate` runs

    assert "database.W006" not in database_check()
    case = CaseLibraryFactory()
    assert list(CaseChange.objects.values_list("case_id", flat=True)) == [case.case_id]


def test_migrate_check_reports_the_missing_triggers_it_would_make(triggers_made_again) -> None:
    drop_triggers(*CHANGE_TRIGGERS)
    err = io.StringIO()

    call_command("migrate", check_unapplied=True, verbosity=0, skip_checks=False, stderr=err)

    assert "database.W006" in err.getvalue()
