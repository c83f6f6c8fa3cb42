"""A merge is in search at once: until the indexer has taken it (a moment, or the whole of
a Milvus outage) the merged case is not the exact hit for its own title or code, which the
index still holds for it."""

import pytest

from caselibrary.selectors import cases_find
from caselibrary.services.duplicates import case_merge_into
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db


def test_a_case_merged_and_not_indexed_since_is_not_found_as_itself_by_its_title() -> None:
    kept = CaseLibraryFactory(title="Redis 内存打满被驱逐", error_code="REDIS-OOM")
    merged = CaseLibraryFactory(title="Bulk case 3: cache stampede on tenant lynxmarble3")
    case_index_build()
    # Merged with no indexer pass after it: the index still holds the case's keys.
    case_merge_into(case_id=merged.case_id, kept_id=kept.case_id, updated_by="curator")

    found = cases_find(query="Bulk case 3: cache stampede on tenant lynxmarble3", limit=5)

    assert merged.case_id not in [m.case.case_id for m in found.matches]
