"""A session id is no longer dots alone (`.`, `..`): the validator's rule only, so no
SQL on any backend. A session stored under such an id before stays as it is."""

import diagnosis.fields
import django.core.validators
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('diagnosis', '0008_session_feedback_at_index'),
    ]

    operations = [
        migrations.AlterField(
            model_name='diagnosissession',
            name='session_id',
            field=diagnosis.fields.IdentifierField(max_length=64, unique=True, validators=[django.core.validators.RegexValidator('\\A(?!\\.+\\Z)[A-Za-z0-9._:-]{1,64}\\Z', code='invalid_session_id', message='A sessionId is 1-64 characters of A-Z a-z 0-9 . _ : -, not dots alone')], verbose_name='session id'),
        ),
    ]
