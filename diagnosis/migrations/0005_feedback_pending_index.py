"""An index for "bad cases whose score is missing" on MariaDB.

A not_useful session without a score is rare (its scoring failed), so without an index
the admin's "pending" filter on bad cases reads every not_useful row to find none: half
a second at a million sessions. `self_evaluation` is JSON (LONGTEXT on MariaDB), so the
index holds one byte of it: enough to tell NULL from a score, and the rows of
(feedback, NULL) come in created_at order for the page. MySQL 8 cannot index a JSON
column even by prefix and SQLite needs no help at its sizes: both are left alone.
"""

from django.db import migrations

NAME = "idx_session_feedback_scored"


def _on_mariadb(schema_editor) -> bool:
    connection = schema_editor.connection
    return connection.vendor == "mysql" and connection.mysql_is_mariadb


def create(apps, schema_editor) -> None:
    if _on_mariadb(schema_editor):
        schema_editor.execute(
            f"CREATE INDEX {NAME} ON diagnosis_session (feedback, self_evaluation(1), created_at)"
        )


def drop(apps, schema_editor) -> None:
    if _on_mariadb(schema_editor):
        schema_editor.execute(f"DROP INDEX {NAME} ON diagnosis_session")


class Migration(migrations.Migration):
    dependencies = [("diagnosis", "0004_identifier_collation")]

    operations = [migrations.RunPython(create, drop, atomic=False, elidable=False)]
