"""The database keeps time in UTC, as Django reads it, whatever the MySQL/MariaDB server's
own time zone: a change to a case is marked at the time it happened, so `case_index` and
the admin overview say when changes have waited too long, also for a change made by raw
SQL from an operator's own client (whose session has the server's zone)."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.utils import timezone

from caselibrary.models import CaseChange
from tests.factories import CaseLibraryFactory
from tests.test_settings import load_settings

MARIADB = "mysql://svc:s3cret@db.internal:3306/diagnosis"


def test_a_mysql_connection_is_asked_for_utc_beside_its_strict_mode_and_lock_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", DATABASE_URL=MARIADB)
    init_command = loaded["DATABASES"]["default"]["OPTIONS"]["init_command"]

    assert "time_zone='+00:00'" in init_command
    assert "STRICT_TRANS_TABLES" in init_command
    assert "innodb_lock_wait_timeout=" in init_command


def a_case_updated_by_raw_sql_in_a_session_eight_hours_east() -> CaseChange:
    case = CaseLibraryFactory()
    CaseChange.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("SET time_zone = '+08:00'")
        try:
            cursor.execute(
                "UPDATE case_library SET title = CONCAT(title, ' y') WHERE case_id = %s",
                [case.case_id],
            )
        finally:
            cursor.execute("SET time_zone = '+00:00'")
    return CaseChange.objects.get()


@pytest.mark.mysql
@pytest.mark.django_db
def test_a_new_connection_of_the_service_keeps_time_in_utc() -> None:
    fresh = connections.create_connection("default")
    try:
        with fresh.cursor() as cursor:
            cursor.execute(
                "SELECT @@session.time_zone, TIMESTAMPDIFF(SECOND, NOW(6), UTC_TIMESTAMP(6))"
            )
            zone, apart = cursor.fetchone()
    finally:
        fresh.close()

    assert zone == "+00:00"
    assert abs(apart) < 60


@pytest.mark.mysql
@pytest.mark.django_db
def test_a_case_changed_by_raw_sql_in_another_time_zone_is_marked_at_the_utc_time() -> None:
    change = a_case_updated_by_raw_sql_in_a_session_eight_hours_east()

    assert abs(change.changed_at - timezone.now()) < timedelta(minutes=1)


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_migrate_makes_the_triggers_of_an_earlier_version_mark_changes_at_the_utc_time() -> None:
    # A database migrated before: its triggers left the time to the column's default.
    call_command("migrate", "caselibrary", "0019", verbosity=0)
    with connection.cursor() as cursor:
        for name, event, row in (
            ("case_library_change_ins", "INSERT", "NEW"),
            ("case_library_change_upd_ids", "UPDATE", "NEW"),
            ("case_library_change_del", "DELETE", "OLD"),
        ):
            cursor.execute(f"DROP TRIGGER {name}")
            cursor.execute(
                f"CREATE TRIGGER {name} AFTER {event} ON case_library FOR EACH ROW"
                f" INSERT INTO case_change (case_id) VALUES ({row}.case_id)"
            )

    call_command("migrate", verbosity=0)

    change = a_case_updated_by_raw_sql_in_a_session_eight_hours_east()
    assert abs(change.changed_at - timezone.now()) < timedelta(minutes=1)
