from django.db import migrations, models
from django.utils import timezone


def mark_older_cases_unstructured(apps, schema_editor):  # type: ignore[no-untyped-def]
    """A database with AUTO cases from before the structuring: those cases' values were
    never proposed. Proposals were recorded when made until now: the first one marks
    where they begin (no record at all: from now)."""
    case_library = apps.get_model("caselibrary", "CaseLibrary")
    if not case_library.objects.filter(source_type="AUTO").exists():
        return
    structuring = apps.get_model("caselibrary", "CaseStructuring")
    first = structuring.objects.order_by("proposed_at").values_list("proposed_at", flat=True)
    since = first.first() or timezone.now()
    state = apps.get_model("caselibrary", "CaseIndexState")
    state.objects.update_or_create(id=1, defaults={"proposals_since": since})


class Migration(migrations.Migration):
    dependencies = [("caselibrary", "0007_outcome_sweep")]

    operations = [
        migrations.AddField(
            model_name="caseindexstate",
            name="proposals_since",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(mark_older_cases_unstructured, migrations.RunPython.noop),
    ]
