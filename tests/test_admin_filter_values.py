"""A list filter of our own given a value it does not offer (a hand-edited URL, a stale
bookmark, a category or tag since deleted) is refused as Django refuses a bad lookup of
its own field filters: the list goes to `?e=1`, the export answers 400 naming the
parameter. It never shows the whole list as though no filter were set. Every value a
list's own filter links carry is taken."""

import html
import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model

from caselibrary.models import FaultCategory
from feedback.models import ReviewTag
from tests.factories import (
    BadCaseReviewFactory,
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FaultCategoryFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

CASES = "/admin/caselibrary/caselibrary/"
BAD_CASES = "/admin/feedback/badcase/"
SESSIONS = "/admin/diagnosis/diagnosissession/"

# Each list's own filters (SimpleListFilter), by their parameter.
OWN_FILTERS = [
    (CASES, "fault_category"),
    (CASES, "still_general"),
    (CASES, "session_not_useful"),
    (CASES, "reuse"),
    (CASES, "near_duplicates"),
    (BAD_CASES, "review_state"),
    (BAD_CASES, "disagreement"),
    (BAD_CASES, "assignee"),
    (BAD_CASES, "tag"),
    (BAD_CASES, "score_band"),
    (SESSIONS, "score_band"),
]
EXPORT_FILTERS = [("/admin/export/cases.csv", key) for url, key in OWN_FILTERS if url == CASES] + [
    ("/admin/export/bad_cases.jsonl", key) for url, key in OWN_FILTERS if url == BAD_CASES
]

_FILTER_PANEL = re.compile(r'<nav id="changelist-filter".*?</nav>', re.S)
_HREF = re.compile(r'href="(\?[^"]*)"')


@pytest.fixture(autouse=True)
def rows(admin_user) -> None:  # type: ignore[no-untyped-def]
    FaultCategoryFactory(code="GENERAL")
    FaultCategoryFactory(code="DISK_FULL")
    CaseLibraryFactory(fault_category="DISK_FULL")
    review = BadCaseReviewFactory(assignee=admin_user)
    review.tags.add(ReviewTag.objects.create(name="flaky-tool"))
    DiagnosisSessionFactory(useful=True, evidence_score=10)


@pytest.mark.parametrize(("url", "key"), OWN_FILTERS)
def test_a_value_the_filter_does_not_offer_sends_the_list_to_the_error_flag(
    admin_client, url, key
) -> None:
    response = admin_client.get(url, {key: "banana"})

    assert response.status_code == 302
    assert response.url == f"{url}?e=1"


@pytest.mark.parametrize(("url", "key"), EXPORT_FILTERS)
def test_a_value_the_filter_does_not_offer_is_an_export_400_naming_it(
    admin_client, url, key
) -> None:
    response = admin_client.get(url, {key: "banana", "o": "1"})

    assert response.status_code == 400
    # The refused parameter alone: the ordering beside it is fine.
    assert response.content.decode().rstrip().endswith(f": {key}")


def test_a_category_deleted_since_the_link_was_made_is_refused(admin_client) -> None:
    FaultCategoryFactory(code="GONE_SOON")
    assert admin_client.get(CASES, {"fault_category": "GONE_SOON"}).status_code == 200

    FaultCategory.objects.filter(code="GONE_SOON").delete()

    assert admin_client.get(CASES, {"fault_category": "GONE_SOON"}).url == f"{CASES}?e=1"
    export = admin_client.get("/admin/export/cases.csv", {"fault_category": "GONE_SOON"})
    assert export.status_code == 400


def test_a_tag_deleted_since_the_link_was_made_is_refused(admin_client) -> None:
    assert admin_client.get(BAD_CASES, {"tag": "flaky-tool"}).status_code == 200

    ReviewTag.objects.filter(name="flaky-tool").delete()

    assert admin_client.get(BAD_CASES, {"tag": "flaky-tool"}).url == f"{BAD_CASES}?e=1"


def test_the_last_of_a_repeated_parameter_is_the_one_checked(admin_client) -> None:
    # The filter applies the last value: a good one last is a good link.
    assert admin_client.get(f"{CASES}?still_general=banana&still_general=yes").status_code == 200
    assert admin_client.get(f"{CASES}?still_general=yes&still_general=banana").status_code == 302


def test_a_good_value_still_filters(admin_client) -> None:
    CaseLibraryFactory(title="merely general", fault_category="GENERAL", updated_by="ops.x")

    page = admin_client.get(CASES, {"fault_category": "GENERAL"})

    assert page.status_code == 200
    assert "merely general" in page.content.decode()


def _lists() -> list[str]:
    return sorted(
        f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for model in admin.site._registry
        if model._meta.app_label in ("diagnosis", "feedback", "caselibrary")
    )


@pytest.mark.parametrize("url", _lists())
def test_every_filter_link_a_list_shows_opens_it(admin_client, url) -> None:
    get_user_model().objects.create_user("ops.other", is_staff=True)
    page = admin_client.get(url)
    assert page.status_code == 200
    panel = _FILTER_PANEL.search(page.content.decode())
    links = sorted({html.unescape(h) for h in _HREF.findall(panel.group(0))}) if panel else []

    answers = {link: admin_client.get(url + link).status_code for link in links}

    assert panel is None or links
    assert answers == dict.fromkeys(links, 200)


def test_a_tag_past_the_hundred_the_tag_filter_lists_still_filters(admin_client) -> None:
    ReviewTag.objects.bulk_create(ReviewTag(name=f"tag-{n:03}") for n in range(120))

    response = admin_client.get("/admin/feedback/badcase/", {"tag": "tag-119"})

    assert response.status_code == 200


def test_the_list_a_refused_filter_reopens_says_it_shows_every_row(admin_client) -> None:
    response = admin_client.get(
        "/admin/caselibrary/caselibrary/", {"still_general": "banana"}, follow=True
    )

    assert response.redirect_chain[-1][0].endswith("?e=1")
    assert "it shows every row" in response.content.decode()
