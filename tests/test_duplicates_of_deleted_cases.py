"""A case deleted while the indexer compares the cases it just indexed with the library:
the comparison goes on for the others (it stopped the indexer's pass with a KeyError, and
the deleted cases' passages stayed searchable until the task ran again)."""

import time

import pytest

from caselibrary.models import CaseDuplicate, CaseLibrary
from caselibrary.services.duplicates import cases_flag_duplicates
from caselibrary.services.index_pass import _index_cases, store
from tests.near_duplicates import near_duplicate_pair

pytestmark = pytest.mark.django_db


def test_new_cases_deleted_before_they_are_compared_are_passed_over() -> None:
    older, newer, unrelated = near_duplicate_pair()
    CaseDuplicate.objects.all().delete()
    work = _index_cases([newer.pk, unrelated.pk], until=time.monotonic() + 60)
    CaseLibrary.objects.filter(pk=unrelated.pk).delete()

    flagged = cases_flag_duplicates(store(), [newer.pk, unrelated.pk], work.passages)

    assert flagged == 1
    assert list(CaseDuplicate.objects.values_list("case_id", "similar_id")) == [
        (newer.pk, older.pk)
    ]
