from django.db import migrations

# The tokenizer now keeps the words of every script (Cyrillic, Greek, Korean, Japanese
# kana, Indic scripts) and folds Latin accents ("café" and "cafe" are one term); the
# passages stored before hold no term for those words, or pieces of them ("caf"). A title
# of those scripts alone normalised to nothing, and so did the empty title a deleted or
# merged case is indexed with: every such case held the one key of the empty title, which
# a deleted case left behind. Those keys go, and every case goes back into the indexer's
# queue, as in 0014: its vectors are kept (the texts did not change, so nothing is
# embedded again) and searches keep answering from the old passages until each case's
# new ones replace them.

BATCH = 1_000
# "title:" + caselibrary.search_text.text_key("") as the indexer wrote it.
EMPTY_TITLE_KEY = "title:3345524abf6bbe1809449224b5972c41790b6cf2"


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    apps.get_model("caselibrary", "CaseSearchKey").objects.filter(key=EMPTY_TITLE_KEY).delete()
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
        ("caselibrary", "0014_reindex_for_identifier_parts"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
