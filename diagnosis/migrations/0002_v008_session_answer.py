"""V008 of the original system.

    ALTER TABLE diagnosis_session ADD COLUMN answer LONGTEXT
        COMMENT 'Agent 返回给用户的完整答案';

A nullable column: existing rows keep every value and get NULL. Marked `initial` so
that `migrate --fake-initial` on a database of the original system that already ran
V008 records it as applied instead of adding the column a second time (Django fakes an
initial migration's AddField when the column exists).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("diagnosis", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="diagnosissession",
            name="answer",
            field=models.TextField(
                blank=True,
                db_comment="Agent 返回给用户的完整答案",
                null=True,
                verbose_name="answer",
            ),
        ),
    ]
