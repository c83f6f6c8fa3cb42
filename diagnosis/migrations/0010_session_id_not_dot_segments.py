"""A session id is no longer refused for being dots alone, only for being `.` or `..`
(the dot-segments a URL cannot name; `...` is an ordinary id): the validator's rule and
its message only, so no SQL on any backend."""

import diagnosis.fields
import django.core.validators
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('diagnosis', '0009_session_id_not_dots_alone'),
    ]

    operations = [
        migrations.AlterField(
            model_name='diagnosissession',
            name='session_id',
            field=diagnosis.fields.IdentifierField(max_length=64, unique=True, validators=[django.core.validators.RegexValidator('\\A(?!\\.\\.?\\Z)[A-Za-z0-9._:-]{1,64}\\Z', code='invalid_session_id', message='A sessionId is 1-64 characters of A-Z a-z 0-9 . _ : -, not "." or ".."')], verbose_name='session id'),
        ),
    ]
