"""The merge page (/admin/caselibrary/caselibrary/<case>/merge/<other>/) merges only what
the case page offers: two cases flagged as near-duplicates of each other, neither merged.
Any other pair posted to it is refused with a message, and nothing changes."""

import datetime

import pytest
from django.contrib.admin.models import LogEntry
from django.core.exceptions import ValidationError

from caselibrary.models import CaseDuplicate, CaseLibrary, CaseMerge
from caselibrary.services.duplicates import case_merge, case_merge_into, case_merge_pair
from tests.factories import CaseLibraryFactory
from tests.near_duplicates import near_duplicate_pair

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

CASES = "/admin/caselibrary/caselibrary/"
NOT_FLAGGED = "Only cases flagged as near-duplicates of each other can be merged."


def merge_url(case: CaseLibrary, other: CaseLibrary) -> str:
    return f"{CASES}{case.pk}/merge/{other.pk}/"


def shown_messages(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(message) for message in response.context["messages"]]


def library_state() -> tuple:
    """Everything a merge writes: merges, flags, the cases' rows, the admin's history."""
    return (
        sorted(CaseMerge.objects.values_list("case_id", "merged_into")),
        sorted(CaseDuplicate.objects.values_list("case_id", "similar_id")),
        sorted(CaseLibrary.objects.values_list("case_id", "updated_by", "updated_at")),
        LogEntry.objects.count(),
    )


def flag(newer: CaseLibrary, older: CaseLibrary) -> None:
    """`newer` flagged as saying the same as `older`, as the indexer flags it."""
    CaseDuplicate.objects.create(case_id=newer.pk, similar_id=older.pk, similarity=0.97)


@pytest.fixture
def pair():  # type: ignore[no-untyped-def]
    return near_duplicate_pair()


# --- Not flagged -----------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["from-the-flagged-case", "from-the-unrelated-case"])
def test_posting_a_merge_of_two_cases_not_flagged_as_near_duplicates_is_refused(
    admin_client, pair, direction: str
) -> None:
    older, newer, unrelated = pair
    case, other = (newer, unrelated) if direction == "from-the-flagged-case" else (unrelated, older)
    before = library_state()

    response = admin_client.post(merge_url(case, other), follow=True)

    assert response.redirect_chain == [(f"{CASES}{case.pk}/change/", 302)]
    assert shown_messages(response) == [NOT_FLAGGED]
    assert library_state() == before


def test_two_unflagged_cases_get_no_confirmation_page_either(admin_client, pair) -> None:
    _, newer, unrelated = pair

    response = admin_client.get(merge_url(newer, unrelated), follow=True)

    assert response.redirect_chain == [(f"{CASES}{newer.pk}/change/", 302)]
    assert shown_messages(response) == [NOT_FLAGGED]
    assert "Yes, merge them" not in response.content.decode()


def test_the_merge_service_refuses_two_cases_not_flagged_as_near_duplicates() -> None:
    older, newer = CaseLibraryFactory.create_batch(2)
    before = library_state()

    with pytest.raises(ValidationError) as refused:
        case_merge(case_id=newer.pk, other_id=older.pk, updated_by="ops.curator")
    with pytest.raises(ValidationError):
        case_merge_pair(case_id=newer.pk, other_id=older.pk)

    assert refused.value.messages == [NOT_FLAGGED]
    assert library_state() == before


# --- Flagged: merged, whichever page the merge starts from ------------------------------


def test_a_flagged_pair_is_merged_from_the_older_cases_page_too(admin_client, pair) -> None:
    older, newer, _ = pair

    response = admin_client.post(merge_url(older, newer))

    assert response.url == f"{CASES}{older.pk}/change/"
    assert list(CaseMerge.objects.values_list("case_id", "merged_into")) == [
        (newer.case_id, older.case_id)
    ]


def test_an_import_still_merges_the_cases_its_file_names_flagged_or_not() -> None:
    kept, merged = CaseLibraryFactory.create_batch(2)

    case_merge_into(case_id=merged.pk, kept_id=kept.pk, updated_by="ops.importer")

    assert list(CaseMerge.objects.values_list("case_id", "merged_into")) == [
        (merged.case_id, kept.case_id)
    ]


# --- Itself, or a case already merged ---------------------------------------------------


def test_merging_a_case_into_itself_is_refused(admin_client, pair) -> None:
    _, newer, _ = pair
    CaseDuplicate.objects.create(case_id=newer.pk, similar_id=newer.pk, similarity=1.0)
    before = library_state()

    response = admin_client.post(merge_url(newer, newer), follow=True)

    assert response.redirect_chain == [(f"{CASES}{newer.pk}/change/", 302)]
    assert shown_messages(response) == ["Both cases must exist and be different."]
    assert library_state() == before


@pytest.mark.parametrize("direction", ["into-the-merged-case", "from-the-merged-case"])
def test_merging_with_a_case_already_merged_into_another_is_refused(
    admin_client, direction: str
) -> None:
    oldest, middle, newest = CaseLibraryFactory.create_batch(3)
    for later, case in enumerate((middle, newest), start=1):
        CaseLibrary.objects.filter(pk=case.pk).update(
            created_at=oldest.created_at + datetime.timedelta(seconds=later)
        )
    # Both flags were raised before the middle case was merged into the oldest.
    flag(middle, oldest)
    flag(newest, middle)
    case_merge(case_id=middle.pk, other_id=oldest.pk, updated_by="ops.curator")
    case, other = (newest, middle) if direction == "into-the-merged-case" else (middle, newest)
    before = library_state()

    response = admin_client.post(merge_url(case, other), follow=True)

    assert response.redirect_chain == [(f"{CASES}{case.pk}/change/", 302)]
    assert shown_messages(response) == ["A case already merged cannot be merged again."]
    assert library_state() == before
