from django.db import migrations, models
from django.utils import timezone


def leave_older_cases_as_they_are(apps, schema_editor):  # type: ignore[no-untyped-def]
    """AUTO cases already in the library were structured when made (they have their
    proposals) or never; the structuring pass starts after them."""
    case_library = apps.get_model("caselibrary", "CaseLibrary")
    if case_library.objects.filter(source_type="AUTO").exists():
        state = apps.get_model("caselibrary", "CaseIndexState")
        state.objects.update_or_create(id=1, defaults={"structured_until": timezone.now()})


class Migration(migrations.Migration):
    dependencies = [("caselibrary", "0007_outcome_sweep")]

    operations = [
        migrations.AddField(
            model_name="caseindexstate",
            name="structured_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(leave_older_cases_as_they_are, migrations.RunPython.noop),
    ]
