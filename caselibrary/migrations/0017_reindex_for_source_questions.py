from django.db import migrations

# A case made from a session's answer now holds that session's whole question as an exact
# key (its title keeps the first 100 characters only), and a case another was merged into
# holds the merged case's question too. Those cases go back into the indexer's queue; their
# vectors are kept (the texts did not change, so nothing is embedded again) and searches
# keep answering from the old passages until each case's new ones replace them.

BATCH = 1_000


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    cases = apps.get_model("caselibrary", "CaseLibrary").objects
    merges = apps.get_model("caselibrary", "CaseMerge").objects
    change = apps.get_model("caselibrary", "CaseChange")
    made = cases.filter(diagnosis_id__isnull=False).values_list("case_id", flat=True)
    into = dict(merges.values_list("case_id", "merged_into"))
    chunk, seen = [], set()
    for case_id in made.iterator(chunk_size=BATCH):
        case_id = into.get(case_id, case_id)
        if case_id in seen:
            continue
        seen.add(case_id)
        chunk.append(change(case_id=case_id))
        if len(chunk) == BATCH:
            change.objects.bulk_create(chunk)
            chunk = []
    change.objects.bulk_create(chunk)


class Migration(migrations.Migration):
    dependencies = [
        ("caselibrary", "0016_case_change_case_index"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
