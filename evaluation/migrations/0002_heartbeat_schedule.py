"""Schedule the worker heartbeat that /readyz checks: once a minute, forever."""

from django.db import migrations
from django.utils import timezone

NAME = "worker-heartbeat"


def schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.get_or_create(
        name=NAME,
        defaults={
            "func": "evaluation.tasks.worker_heartbeat",
            "schedule_type": "I",  # minutes
            "minutes": 1,
            "repeats": -1,
            "next_run": timezone.now(),
        },
    )


def unschedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
