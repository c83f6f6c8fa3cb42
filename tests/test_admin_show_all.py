""" "Show all" on the lists: offered only where it shows something other than the page
the operator is on. Beside the search box it clears the search and the filters (Django's
link to "?"): on a list with neither, it is not offered. In the pagination it lists every
row on one page: offered only when the rows were counted, exactly, and are few enough
(list_max_show_all), never for a count that stopped at its cap or was estimated."""

import re

import pytest

from config.admin_paginator import EstimatedCountPaginator
from feedback.admin.sessions import DiagnosisSessionAdmin
from tests.admin_pages import shown_ids
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

SESSIONS = "/admin/diagnosis/diagnosissession/"
_SEARCH_SHOW_ALL = re.compile(r'<span class="small quiet">.*?</span>', re.S)
_PAGINATION_SHOW_ALL = re.compile(r'<a href="([^"]*)" class="showall">')


def search_bar_count(response) -> str | None:  # type: ignore[no-untyped-def]
    found = _SEARCH_SHOW_ALL.search(response.content.decode())
    return " ".join(found.group(0).split()) if found else None


def pagination_show_all(response) -> str | None:  # type: ignore[no-untyped-def]
    found = _PAGINATION_SHOW_ALL.search(response.content.decode())
    return found.group(1).replace("&amp;", "&") if found else None


def test_an_unfiltered_list_offers_no_show_all_that_leads_back_to_itself(admin_client) -> None:
    DiagnosisSessionFactory.create_batch(3)

    assert search_bar_count(admin_client.get(SESSIONS)) is None


@pytest.mark.parametrize("query", [{"q": "disk"}, {"status__exact": "FAILED"}])
def test_a_searched_or_filtered_list_offers_to_show_all_again(admin_client, query) -> None:
    DiagnosisSessionFactory.create_batch(2, query="disk full", status="FAILED")
    DiagnosisSessionFactory(query="cpu high")

    bar = search_bar_count(admin_client.get(SESSIONS, query))

    assert bar == '<span class="small quiet">2 results (<a href="?">Show all</a>)</span>'


def test_show_all_lists_every_row_of_a_short_list(admin_client) -> None:
    DiagnosisSessionFactory.create_batch(60)
    link = pagination_show_all(admin_client.get(SESSIONS))
    assert link is not None

    assert len(shown_ids(admin_client.get(SESSIONS + link))) == 60


def test_show_all_is_not_offered_for_a_count_that_stopped_at_the_cap(
    admin_client, monkeypatch
) -> None:
    monkeypatch.setattr(EstimatedCountPaginator, "cap", 5)
    monkeypatch.setattr(DiagnosisSessionAdmin, "list_per_page", 2)
    DiagnosisSessionFactory.create_batch(9, status="FAILED")

    page = admin_client.get(SESSIONS, {"status__exact": "FAILED"})
    everything = admin_client.get(SESSIONS, {"status__exact": "FAILED", "all": ""})

    assert "5+ diagnosis sessions" in " ".join(page.content.decode().split())
    assert pagination_show_all(page) is None
    # Asked anyway (an old link): a page, not every row of a list of unknown size.
    assert len(shown_ids(everything)) == 2
