from django.db import migrations

# The tokenizer now also cuts a name joined by underscores into its words
# (`Seconds_Behind_Master` -> seconds, behind, master, and the name itself), so a question
# in words finds the case that quotes the setting or status field; and "error" is no
# search term any more (like 报错, it says nothing about which fault). The passages stored
# before have the whole name only: every case goes back into the indexer's queue. Its
# vectors are kept (the texts did not change, so nothing is embedded again) and searches
# keep answering from the old passages until each case's new ones replace them.

BATCH = 1_000


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    cases = apps.get_model("caselibrary", "CaseLibrary").objects
    change = apps.get_model("caselibrary", "CaseChange")
    chunk = []
    for case_id in cases.values_list("case_id", flat=True).iterator(chunk_size=BATCH):
        chunk.append(change(case_id=case_id))
        if len(chunk) == BATCH:
            change.objects.bulk_create(chunk)
            chunk = []
    change.objects.bulk_create(chunk)


class Migration(migrations.Migration):
    dependencies = [
        ("caselibrary", "0013_case_passage_lexemes_only_on_sqlite"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
