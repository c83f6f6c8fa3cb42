"""Near-duplicates: flagged when the newer case is indexed, shown side by side in the
admin, merged into the older case, which keeps the reuse counts and is the only way to
find the other."""

import pytest

from caselibrary.models import CaseDuplicate, CaseMerge, CasePassage, CaseReuse
from caselibrary.selectors import cases_find
from caselibrary.services.index import case_index_build
from tests.near_duplicates import near_duplicate_pair

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair():  # type: ignore[no-untyped-def]
    return near_duplicate_pair()


def test_a_case_that_says_the_same_as_an_older_one_is_flagged(pair) -> None:
    older, newer, _unrelated = pair

    flags = list(CaseDuplicate.objects.values_list("case_id", "similar_id"))

    assert flags == [(newer.case_id, older.case_id)]


def test_the_admin_shows_both_side_by_side_with_a_merge_button(admin_client, pair) -> None:
    older, newer, _ = pair

    page = admin_client.get(f"/admin/caselibrary/caselibrary/{newer.pk}/change/").content.decode()

    assert "订单库锁等待超时导致下单失败" in page and "订单库锁等待超时，下单失败" in page
    assert f"/admin/caselibrary/caselibrary/{newer.pk}/merge/{older.pk}/" in page


def test_merging_keeps_the_older_case_with_the_counts_and_finds_the_other_only_through_it(
    admin_client, pair
) -> None:
    older, newer, _ = pair
    CaseReuse.objects.create(case=older, l0_hits=2, sessions_useful=1)
    CaseReuse.objects.create(case=newer, l1_hits=3, sessions_useful=2, sessions_not_useful=1)

    response = admin_client.post(f"/admin/caselibrary/caselibrary/{newer.pk}/merge/{older.pk}/")
    case_index_build()

    assert response.status_code == 302
    assert response.url == f"/admin/caselibrary/caselibrary/{older.pk}/change/"
    assert CaseMerge.objects.get(case_id=newer.pk).merged_into == older.case_id
    reuse = CaseReuse.objects.get(case=older)
    assert (reuse.l0_hits, reuse.l1_hits, reuse.sessions_useful, reuse.sessions_not_useful) == (
        2,
        3,
        3,
        1,
    )
    assert not CasePassage.objects.filter(case_id=newer.case_id).exists()
    assert cases_find(query="订单库锁等待超时，下单失败", limit=5).case_ids == [older.case_id]
    assert not CaseDuplicate.objects.exists()
