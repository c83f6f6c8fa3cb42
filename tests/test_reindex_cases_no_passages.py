"""`manage.py reindex_cases` (without --all) marks the cases whose vectors are of another
model or missing; a case whose indexing made no passage (merged into another, or with no
search term in its texts) is not missing anything, and is not marked at every run."""

import pytest
from django.core.management import call_command

from caselibrary.models import CasePassage
from caselibrary.services.duplicates import case_merge_into
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db


def test_a_reindex_leaves_the_cases_whose_indexing_made_no_passage(capsys) -> None:
    kept = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code=None)
    merged = CaseLibraryFactory(title="Kafka lag grows after a rebalance", error_code=None)
    CaseLibraryFactory(title="…", root_cause="?!", solution="1. 2.", error_code=None)
    case_index_build()
    case_merge_into(case_id=merged.case_id, kept_id=kept.case_id, updated_by="ops.curator")
    case_index_build()

    call_command("reindex_cases")
    call_command("reindex_cases")

    assert capsys.readouterr().out.count("Re-indexed 0 case(s) (0 marked).") == 2


def test_a_reindex_marks_the_cases_whose_passages_are_missing_or_of_another_model(
    capsys,
) -> None:
    lost = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code=None)
    older = CaseLibraryFactory(title="Redis 内存写满，写入被拒绝", error_code=None)
    kept = CaseLibraryFactory(title="Pod OOMKilled after a deploy", error_code=None)
    merged = CaseLibraryFactory(title="Pods OOMKilled again", error_code=None)
    case_index_build()
    case_merge_into(case_id=merged.case_id, kept_id=kept.case_id, updated_by="ops.curator")
    case_index_build()
    CasePassage.objects.filter(case_id__in=[lost.case_id, kept.case_id]).delete()
    CasePassage.objects.filter(case_id=older.case_id).update(model="an-older-model")

    call_command("reindex_cases")

    assert "Re-indexed 3 case(s) (3 marked)." in capsys.readouterr().out
    indexed = set(CasePassage.objects.values_list("case_id", flat=True))
    assert indexed == {lost.case_id, older.case_id, kept.case_id}
