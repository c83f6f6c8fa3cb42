from django.db import migrations

# On MariaDB/MySQL the passages' terms are ranked by an index each serving process holds
# in memory (caselibrary/search_backends/term_index.py), not by InnoDB's FULLTEXT query,
# which read every row holding any of a question's terms (p50 57-68 ms over 28,000
# passages): the FULLTEXT index only slowed every passage write down. SQLite keeps FTS5.


# SQL: the index was made by SQL in 0010 (Django has no FULLTEXT index for MySQL/MariaDB,
# so its migration state does not know it), and only SQL can drop it.


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("ALTER TABLE case_passage DROP INDEX ft_case_passage_lexemes")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                "ALTER TABLE case_passage ADD FULLTEXT INDEX ft_case_passage_lexemes (lexemes)"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("caselibrary", "0011_case_near_duplicates_and_merge"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
