"""A case's exact (L0) keys go with it: deleting a case, or merging it into another,
leaves no key row of its own in case_search_key."""

import pytest

from caselibrary.models import CaseSearchKey
from caselibrary.passages import exact_keys
from caselibrary.services.cases import cases_delete
from caselibrary.services.duplicates import case_merge_into
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db


def _keys(case_id: str) -> list[str]:
    return list(CaseSearchKey.objects.filter(case_id=case_id).values_list("key", flat=True))


def test_a_title_that_normalises_to_nothing_has_no_title_key() -> None:
    assert exact_keys(title="", error_code=None) == []
    assert exact_keys(title="🔥 — ?", error_code=None) == []
    assert exact_keys(title="", error_code="OOMKilled") == ["code:oomkilled"]


def test_deleting_a_case_leaves_no_key_row_of_it() -> None:
    case = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code="OOMKilled")
    case_index_build()
    assert len(_keys(case.case_id)) == 2  # its code and its title

    cases_delete(case_ids=[case.case_id])
    case_index_build()

    assert _keys(case.case_id) == []
    assert not CaseSearchKey.objects.exists()


def test_a_merged_case_leaves_no_key_row_under_its_own_id() -> None:
    kept = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code=None)
    merged = CaseLibraryFactory(title="Kafka lag grows after a rebalance", error_code=None)
    case_index_build()

    case_merge_into(case_id=merged.case_id, kept_id=kept.case_id, updated_by="ops.curator")
    case_index_build()

    assert _keys(merged.case_id) == []
    assert len(_keys(kept.case_id)) == 2  # its title and the merged case's title
