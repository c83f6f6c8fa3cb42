"""Identifiers compare byte for byte on MySQL/MariaDB.

Tables this project creates already have utf8mb4_bin on sessionId-like columns (see
diagnosis/fields.py). A database adopted from the original system (`migrate
--fake-initial`) has the server's default, case-insensitive collation there: `abc` and
`ABC` would be one session, and new foreign keys to session_id would not even be
accepted, since MySQL wants both ends of a foreign key in the same collation. This
migration converts those columns once; it does nothing where they are already binary,
and nothing on SQLite, which always compares bytes.
"""

from django.db import migrations

BINARY = "utf8mb4_bin"
IDENTIFIER_COLUMNS = [
    ("diagnosis_session", "session_id"),
    ("tool_invocation", "session_id"),
    ("tool_invocation", "invocation_id"),
    ("case_library", "diagnosis_id"),
]


def to_binary_collation(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "mysql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT collation_name FROM information_schema.columns WHERE table_schema = DATABASE()"
            " AND table_name = 'diagnosis_session' AND column_name = 'session_id'"
        )
        if cursor.fetchone()[0] == BINARY:
            return
        cursor.execute(
            "SELECT constraint_name, table_name, column_name FROM information_schema.key_column_usage"
            " WHERE table_schema = DATABASE() AND referenced_table_name = 'diagnosis_session'"
            " AND referenced_column_name = 'session_id'"
        )
        foreign_keys = cursor.fetchall()
        for name, table, _ in foreign_keys:
            cursor.execute(f"ALTER TABLE `{table}` DROP FOREIGN KEY `{name}`")
        columns = set(IDENTIFIER_COLUMNS) | {(table, column) for _, table, column in foreign_keys}
        for table, column in sorted(columns):
            cursor.execute(
                "SELECT column_type, is_nullable FROM information_schema.columns"
                " WHERE table_schema = DATABASE() AND table_name = %s AND column_name = %s",
                [table, column],
            )
            column_type, nullable = cursor.fetchone()
            cursor.execute(
                f"ALTER TABLE `{table}` MODIFY `{column}` {column_type} CHARACTER SET utf8mb4"
                f" COLLATE {BINARY} {'NULL' if nullable == 'YES' else 'NOT NULL'}"
            )
        for name, table, column in foreign_keys:
            cursor.execute(
                f"ALTER TABLE `{table}` ADD CONSTRAINT `{name}` FOREIGN KEY (`{column}`)"
                " REFERENCES `diagnosis_session` (`session_id`)"
            )


class Migration(migrations.Migration):
    dependencies = [("diagnosis", "0003_api_key"), ("caselibrary", "0001_initial")]

    operations = [migrations.RunPython(to_binary_collation, migrations.RunPython.noop)]
