"""Schedule the scoring sweep: once a minute it scores completed sessions whose scoring
task was lost (a worker killed while holding it on the Redis broker, which has no
redelivery)."""

from django.db import migrations
from django.utils import timezone

NAME = "scoring-sweep"


def schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.get_or_create(
        name=NAME,
        defaults={
            "func": "evaluation.tasks.scoring_sweep",
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
        ("evaluation", "0003_opinion_daily_budget"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
