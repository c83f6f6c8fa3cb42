"""`tool_invocation.kind` is `retrieval` by default in the database too, as the contract's
table has it: a fact written by SQL without a kind is a retrieval call, as one sent to
the API is. On MariaDB/MySQL the column's default alone changes (`ALTER COLUMN ... SET
DEFAULT`: no row is rewritten)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('diagnosis', '0010_session_id_not_dot_segments'),
    ]

    operations = [
        migrations.AlterField(
            model_name='toolinvocation',
            name='kind',
            field=models.CharField(choices=[('retrieval', 'Retrieval'), ('other', 'Other')], db_default='retrieval', default='retrieval', max_length=16, verbose_name='kind'),
        ),
    ]
