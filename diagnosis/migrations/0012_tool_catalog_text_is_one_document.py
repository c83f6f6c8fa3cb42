"""The tool catalog's option "a text result is one document", off for every tool, in the
database too: a row written by SQL has it off. A column with a constant default, which
MariaDB (10.3 and later) adds without rewriting the table's rows."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('diagnosis', '0011_tool_invocation_kind_db_default'),
    ]

    operations = [
        migrations.AddField(
            model_name='toolcatalogentry',
            name='text_is_one_document',
            field=models.BooleanField(db_default=False, default=False, help_text='For a tool that answers text rather than a JSON list: a result that is not blank and that the service cannot count documents in (not a JSON list, no list under the usual keys) counts as one document retrieved, so the level rule reads L1 (or L0 with the exact-code rule when a code is found). Leave it off for a tool that answers text such as "nothing found".', verbose_name='a text result is one document'),
        ),
    ]
