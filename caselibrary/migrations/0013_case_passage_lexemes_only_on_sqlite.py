import hashlib

from django.db import migrations

# On MariaDB/MySQL nothing reads `case_passage.lexemes` since 0012 dropped their FULLTEXT
# index (the terms are ranked in memory), yet they were a quarter of each row (about 1 KB
# of 3.9): the rows every search reads its best passages' stored vectors from. They are
# emptied here, in batches by primary key, and written no more (SQLite's FTS5 keeps them).
# Going back fills them again from `terms`, as 0012's way back (the FULLTEXT index) needs.

BATCH = 5_000


def _lexemes(terms: str) -> str:
    # caselibrary.search_backends.database.lexemes, as it was when this was written.
    return " ".join(
        "t" + hashlib.blake2b(term.encode(), digest_size=8).hexdigest()[:15]
        for term in terms.split()
    )


def _batches(passages):  # type: ignore[no-untyped-def]
    last = 0
    while True:
        ids = list(
            passages.filter(id__gt=last).order_by("id").values_list("id", flat=True)[:BATCH]
        )
        if not ids:
            return
        yield ids
        last = ids[-1]


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "sqlite":
        return
    passages = apps.get_model("caselibrary", "CasePassage").objects
    for ids in _batches(passages.exclude(lexemes="")):
        passages.filter(id__in=ids).update(lexemes="")


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "sqlite":
        return
    passage_model = apps.get_model("caselibrary", "CasePassage")
    for ids in _batches(passage_model.objects.filter(lexemes="")):
        rows = list(passage_model.objects.filter(id__in=ids).only("id", "terms"))
        for row in rows:
            row.lexemes = _lexemes(row.terms)
        passage_model.objects.bulk_update(rows, ["lexemes"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("caselibrary", "0012_drop_case_passage_fulltext"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
