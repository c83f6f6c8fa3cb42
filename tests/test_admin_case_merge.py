"""Merging near-duplicate cases in the admin: confirmed on a page of its own, recorded
in both cases' history, offered only to those who may change cases, undone for the
merged cases when the kept one is deleted (by any path); and the list's filter that
finds the cases to review. The admin speaks Chinese by default: so do these tests."""

import pytest
from django.db import connection

from caselibrary.models import CaseLibrary, CaseMerge
from caselibrary.services.index import case_index_build
from tests.admin_pages import member_of
from tests.near_duplicates import near_duplicate_pair

pytestmark = pytest.mark.django_db

CASES = "/admin/caselibrary/caselibrary/"


@pytest.fixture
def pair():  # type: ignore[no-untyped-def]
    return near_duplicate_pair()


@pytest.fixture
def merged(admin_client, pair):  # type: ignore[no-untyped-def]
    """The pair merged in the admin (the older kept) and indexed."""
    older, newer, _ = pair
    admin_client.post(f"{CASES}{newer.pk}/merge/{older.pk}/", follow=True)
    case_index_build()
    assert CaseMerge.objects.filter(case_id=newer.pk).exists()
    return older, newer


def found_titles(api, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    hits = api.post("/api/cases/search", {"query": query}, format="json").json()["hits"]
    return [CaseLibrary.objects.get(pk=hit["caseId"]).title for hit in hits]


# --- Deleting the kept case ----------------------------------------------------------


def test_deleting_the_kept_case_in_the_admin_makes_the_merged_case_a_case_of_its_own(
    api, admin_client, merged
) -> None:
    older, newer = merged
    assert found_titles(api, "订单库锁等待超时，下单失败") == ["订单库锁等待超时导致下单失败"]

    admin_client.post(f"{CASES}{older.pk}/delete/", {"post": "yes"})
    case_index_build()

    assert found_titles(api, "订单库锁等待超时，下单失败") == ["订单库锁等待超时，下单失败"]
    page = admin_client.get(f"{CASES}{newer.pk}/change/").content.decode()
    assert "已合并到" not in page


@pytest.mark.parametrize("how", ["queryset", "sql"])
def test_deleting_the_kept_case_by_any_path_makes_the_merged_case_a_case_of_its_own(
    api, merged, how: str
) -> None:
    older, _ = merged

    if how == "queryset":
        CaseLibrary.objects.filter(pk=older.pk).delete()
    else:
        # Raw SQL on purpose: a case deleted outside the ORM (a DBA, a script) is one of the
        # write paths the index must follow, through the database's triggers.
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM case_library WHERE case_id = %s", [older.pk])
    case_index_build()

    assert found_titles(api, "订单库锁等待超时，下单失败") == ["订单库锁等待超时，下单失败"]
    assert not CaseMerge.objects.exists()


def test_the_delete_confirmation_says_the_merged_cases_will_become_separate_again(
    admin_client, merged
) -> None:
    older, newer = merged

    one = admin_client.get(f"{CASES}{older.pk}/delete/").content.decode()
    bulk = admin_client.post(
        CASES, {"action": "delete_selected", "_selected_action": [older.pk]}
    ).content.decode()
    merged_one = admin_client.get(f"{CASES}{newer.pk}/delete/").content.decode()

    assert "1 个合并到所删案例的案例将重新成为独立的案例" in one
    assert "1 个合并到所删案例的案例将重新成为独立的案例" in bulk
    assert "重新成为独立的案例" not in merged_one


# --- Merging: confirmed, recorded ------------------------------------------------------


def test_the_merge_button_opens_a_confirmation_showing_both_cases(admin_client, pair) -> None:
    older, newer, _ = pair
    url = f"{CASES}{newer.pk}/merge/{older.pk}/"

    case_page = admin_client.get(f"{CASES}{newer.pk}/change/").content.decode()
    confirmation = admin_client.get(url).content.decode()

    # A link, not a button that submits (and so throws away) the change form.
    assert f'<a class="button" href="{url}">合并到较早的案例</a>' in case_page
    assert "formaction" not in case_page
    assert (
        "订单库锁等待超时导致下单失败" in confirmation
        and "订单库锁等待超时，下单失败" in confirmation
    )
    assert "保留（较早）" in confirmation and "案例页上未保存的修改不会保留" in confirmation
    assert '<form method="post">' in confirmation
    assert not CaseMerge.objects.exists()


def test_a_confirmed_merge_is_in_both_cases_history_and_names_who_merged(
    admin_client, admin_user, pair
) -> None:
    older, newer, _ = pair

    response = admin_client.post(f"{CASES}{newer.pk}/merge/{older.pk}/")

    assert response.url == f"{CASES}{older.pk}/change/"
    kept_history = admin_client.get(f"{CASES}{older.pk}/history/").content.decode()
    merged_history = admin_client.get(f"{CASES}{newer.pk}/history/").content.decode()
    assert (
        f"已将“\u2068订单库锁等待超时，下单失败\u2069”（{newer.pk}）合并到本案例。" in kept_history
    )
    assert f"已合并到“\u2068订单库锁等待超时导致下单失败\u2069”（{older.pk}）。" in merged_history
    assert CaseLibrary.objects.get(pk=older.pk).updated_by == admin_user.get_username()


def test_a_case_already_merged_cannot_be_merged_again_and_the_page_says_why(
    admin_client, merged, pair
) -> None:
    _, newer = merged
    unrelated = pair[2]

    response = admin_client.get(f"{CASES}{unrelated.pk}/merge/{newer.pk}/", follow=True)

    assert response.redirect_chain == [(f"{CASES}{unrelated.pk}/change/", 302)]
    assert "已合并的案例不能再次合并。" in response.content.decode()


# --- Who may merge ---------------------------------------------------------------------


@pytest.mark.parametrize("group", ["viewer", "reviewer"])
def test_only_those_who_may_change_cases_see_the_merge_button_or_may_merge(
    pair, group: str
) -> None:
    older, newer, _ = pair
    url = f"{CASES}{newer.pk}/merge/{older.pk}/"
    reader, curator = member_of(group), member_of("curator")

    assert url not in reader.get(f"{CASES}{newer.pk}/change/").content.decode()
    assert url in curator.get(f"{CASES}{newer.pk}/change/").content.decode()
    assert reader.get(url).status_code == 403
    assert reader.post(url).status_code == 403
    assert not CaseMerge.objects.exists()


# --- Finding the cases to review -----------------------------------------------------


def test_the_case_list_filters_the_cases_flagged_as_near_duplicates(admin_client, pair) -> None:
    older, newer, unrelated = pair

    flagged = admin_client.get(CASES, {"near_duplicates": "yes"}).content.decode()
    unflagged = admin_client.get(CASES, {"near_duplicates": "no"}).content.decode()

    assert "有：待审核" in flagged
    assert older.title in flagged and newer.title in flagged
    assert unrelated.title not in flagged
    assert unrelated.title in unflagged
    assert older.title not in unflagged and newer.title not in unflagged


def test_merged_cases_leave_the_near_duplicate_filter(admin_client, merged) -> None:
    older, newer = merged

    response = admin_client.get(CASES, {"near_duplicates": "yes"})

    flagged = response.content.decode()
    assert response.status_code == 200 and "有：待审核" in flagged
    assert older.title not in flagged and newer.title not in flagged
