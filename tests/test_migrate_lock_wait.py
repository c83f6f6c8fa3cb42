"""`migrate` on MariaDB waits MIGRATE_LOCK_WAIT_TIMEOUT seconds at most for a table another
session holds, then stops with one line saying what to do, the migration not applied:
meanwhile every query on that table queues behind its wait (a long transaction holding
the sessions table stalled the whole service, and the migration then died half-way at the
request's read timeout)."""

import MySQLdb
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]

LATEST = "0013_session_status_feedback_index"


def applied(name: str) -> bool:
    return MigrationRecorder(connection).migration_qs.filter(app="diagnosis", name=name).exists()


@pytest.fixture
def table_held():  # type: ignore[no-untyped-def]
    """Another session in a transaction that has read the sessions table (an analyst's
    query left open): it holds the table's metadata lock until it ends."""
    params = connection.get_connection_params()
    other = MySQLdb.connect(
        host=params.get("host", "127.0.0.1"),
        port=params.get("port", 3306),
        user=params.get("user", "root"),
        password=params.get("password", ""),
        database=params["database"],
    )
    cursor = other.cursor()
    cursor.execute("START TRANSACTION")
    cursor.execute("SELECT COUNT(*) FROM diagnosis_session")
    yield other
    other.rollback()
    other.close()
    call_command("migrate", verbosity=0)  # back to the latest schema for the next tests


def test_a_migration_that_cannot_have_its_table_stops_with_what_to_do(table_held, settings) -> None:
    settings.MIGRATE_LOCK_WAIT_TIMEOUT = 2

    with pytest.raises(CommandError, match="waited 2 s for a table that another session holds"):
        call_command("migrate", "diagnosis", "0012", verbosity=0)

    assert applied(LATEST)  # its undoing was not applied either
    table_held.rollback()
    call_command("migrate", "diagnosis", "0012", verbosity=0)
    assert not applied(LATEST)
