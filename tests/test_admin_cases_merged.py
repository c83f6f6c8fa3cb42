"""A case merged into an older one is marked as such in the case list (with a link to the
case it was merged into) and in the case exports (`merged_into`, the kept case's id)."""

import csv
import io
import json
import re

import pytest

from caselibrary.services.duplicates import case_merge
from tests.factories import CaseLibraryFactory, FaultCategoryFactory
from tests.near_duplicates import flag_near_duplicates

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

CASES = "/admin/caselibrary/caselibrary/"


@pytest.fixture
def cases():  # type: ignore[no-untyped-def]
    FaultCategoryFactory(code="GENERAL")
    kept, merged, alone = CaseLibraryFactory.create_batch(3)
    flag_near_duplicates(merged, kept)
    case_merge(case_id=merged.pk, other_id=kept.pk, updated_by="ops.curator")
    return kept, merged, alone


def row_of(page: str, case_id: str) -> str:
    """The list's row whose title links to the case."""
    rows = re.findall(r"<tr>.*?</tr>", page, re.S)
    [row] = [r for r in rows if f'field-title"><a href="{CASES}{case_id}/change/' in r]
    return row


def test_a_merged_case_says_in_the_list_which_case_it_was_merged_into(admin_client, cases) -> None:
    kept, merged, alone = cases

    page = admin_client.get(CASES).content.decode()

    marker = row_of(page, merged.case_id)
    assert "merged into" in marker
    assert f'href="{CASES}{kept.case_id}/change/"' in marker
    assert f"#{kept.case_id[:8]}" in marker
    assert "merged into" not in row_of(page, kept.case_id)
    assert "merged into" not in row_of(page, alone.case_id)


def test_the_case_list_with_merges_reads_no_more_per_row(
    admin_client, cases, django_assert_max_num_queries
) -> None:
    CaseLibraryFactory.create_batch(20)

    with django_assert_max_num_queries(10):
        assert admin_client.get(CASES).status_code == 200


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_case_export_names_the_case_each_case_was_merged_into(admin_client, cases, fmt) -> None:
    kept, merged, alone = cases

    response = admin_client.get(f"/admin/export/cases.{fmt}")
    text = b"".join(response.streaming_content).decode("utf-8-sig")

    if fmt == "csv":
        rows = {r["case_id"]: r["merged_into"] for r in csv.DictReader(io.StringIO(text))}
        empty = ""
    else:
        rows = {r["case_id"]: r["merged_into"] for r in map(json.loads, text.splitlines())}
        empty = None
    assert rows == {kept.case_id: empty, merged.case_id: kept.case_id, alone.case_id: empty}
