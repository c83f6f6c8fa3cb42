"""Schedule the session retention purge once a day. It does nothing unless
SESSION_RETENTION_DAYS is set (see docs/operations.md)."""

from datetime import timedelta

from django.db import migrations
from django.utils import timezone

NAME = "session-retention"


def schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    # First run at the next 03:00 UTC, a quiet hour for most teams.
    now = timezone.now()
    first = now.replace(hour=3, minute=0, second=0, microsecond=0)
    if first <= now:
        first += timedelta(days=1)
    Schedule.objects.get_or_create(
        name=NAME,
        defaults={
            "func": "feedback.tasks.sessions_purge_task",
            "schedule_type": "D",  # daily
            "repeats": -1,
            "next_run": first,
        },
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0006_staff_groups"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
