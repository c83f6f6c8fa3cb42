from django.db import migrations

# case_change.changed_at was left to the column's default, CURRENT_TIMESTAMP: on
# MySQL/MariaDB that is the session's time zone (the server's, SYSTEM, unless the client
# sets one), which Django reads as UTC, so a server eight hours east of UTC marked changes
# eight hours in the future and `case_index` never said a change had waited too long. The
# triggers now write UTC_TIMESTAMP (caselibrary/triggers.py); a database migrated before
# has them as they were, and `migrate` only creates the missing ones: they are replaced
# here. SQLite's default is UTC already: its triggers stay.


def forwards(apps, schema_editor):
    from caselibrary.triggers import change_triggers_replace

    if schema_editor.connection.vendor == "mysql":
        change_triggers_replace(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("caselibrary", "0019_import_source_read_fields"),
    ]

    # Backwards the triggers stay as they are: UTC is right for the earlier code as well.
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
