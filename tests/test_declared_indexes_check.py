"""A database taken over with `migrate --fake-initial` has the service's tables without the
indexes the faked migrations would have made. `check --database default` (and `migrate`)
names each index and unique key the database lacks, with the statement that creates it."""

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

pytestmark = pytest.mark.django_db(transaction=True)


def database_check() -> str:
    out = io.StringIO()
    try:
        call_command("check", databases=["default"], stdout=out, stderr=out)
    except Exception as exc:  # an Error stops the command: its text is the report
        return str(exc)
    return out.getvalue()


def drop_index(table: str, name: str) -> None:
    with connection.schema_editor() as editor:
        if connection.vendor == "mysql":
            editor.execute(f"ALTER TABLE {editor.quote_name(table)} DROP INDEX {name}")
        else:
            editor.execute(f"DROP INDEX {name}")


def restore_index(table: str, name: str, columns: str) -> None:
    with connection.cursor() as cursor:
        if name not in connection.introspection.get_constraints(cursor, table):
            cursor.execute(f"CREATE INDEX {name} ON {table} ({columns})")


def hinted_statement(report: str, table: str) -> str:
    line = next(line for line in report.splitlines() if "HINT:" in line and table in line)
    return line.split("HINT:", 1)[1].strip()


def test_a_migrated_database_has_every_declared_index() -> None:
    report = database_check()

    assert "database.W003" not in report
    assert "database.E005" not in report


def test_a_missing_index_is_named_with_the_statement_that_creates_it() -> None:
    drop_index("diagnosis_session", "idx_session_status_created")
    try:
        report = database_check()

        assert "diagnosis_session has no index on (status, created_at)" in report
        statement = hinted_statement(report, "diagnosis_session")
        with connection.cursor() as cursor:
            cursor.execute(statement)
        assert "database.W003" not in database_check()
    finally:
        restore_index("diagnosis_session", "idx_session_status_created", "status, created_at")


def test_an_index_of_another_name_on_the_same_columns_counts() -> None:
    drop_index("case_library", "idx_case_created")
    with connection.cursor() as cursor:
        cursor.execute("CREATE INDEX legacy_created ON case_library (created_at, case_id)")
    try:
        assert "case_library has no index" not in database_check()
    finally:
        drop_index("case_library", "legacy_created")
        restore_index("case_library", "idx_case_created", "created_at")


def test_nothing_is_judged_while_a_migration_of_the_service_is_not_applied() -> None:
    # An upgrade's `migrate` runs the check first: the index may be the migration's to make.
    recorder = MigrationRecorder(connection)
    latest = max(name for app, name in recorder.applied_migrations() if app == "diagnosis")
    drop_index("diagnosis_session", "idx_session_created")
    try:
        recorder.record_unapplied("diagnosis", latest)
        try:
            assert "diagnosis_session has no index" not in database_check()
        finally:
            recorder.record_applied("diagnosis", latest)
        assert "diagnosis_session has no index on (created_at)" in database_check()
    finally:
        restore_index("diagnosis_session", "idx_session_created", "created_at")


def test_a_missing_index_whose_name_another_index_holds_is_hinted_under_a_free_name() -> None:
    # An adopted table's own idx_case_created on other columns: CREATE INDEX of that name
    # would fail (1061 Duplicate key name).
    drop_index("case_library", "idx_case_created")
    with connection.cursor() as cursor:
        cursor.execute("CREATE INDEX idx_case_created ON case_library (title)")
    try:
        report = database_check()

        assert "case_library has no index on (created_at)" in report
        statement = hinted_statement(report, "case_library")
        assert "idx_case_created_2" in statement
        with connection.cursor() as cursor:
            cursor.execute(statement)
        assert "case_library has no index" not in database_check()
    finally:
        drop_index("case_library", "idx_case_created")
        with connection.cursor() as cursor:
            hinted = connection.introspection.get_constraints(cursor, "case_library")
        if "idx_case_created_2" in hinted:
            drop_index("case_library", "idx_case_created_2")
        restore_index("case_library", "idx_case_created", "created_at")
