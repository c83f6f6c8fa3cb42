"""An index for the useful-without-evidence queue, latest feedback first: built online on
MariaDB (InnoDB adds a secondary index without locking writes)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('diagnosis', '0007_api_key_curator_scope'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='diagnosissession',
            index=models.Index(fields=['feedback', 'feedback_at'], name='idx_session_feedback_at'),
        ),
    ]
