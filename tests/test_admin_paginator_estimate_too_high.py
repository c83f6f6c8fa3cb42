"""An unfiltered list whose table statistics promise more rows than the table holds
(config/admin_paginator.py): every page link works, and a page past the real end shows
the real last page with the exact count.

The statistics cannot be set on a test database (InnoDB samples pages; SQLite has none),
so the estimate is what our own reader of them returns here.
"""

import re

import pytest
from django.http import HttpResponse

from config import admin_paginator
from config.admin_paginator import EstimatedCountPaginator
from feedback.admin.sessions import DiagnosisSessionAdmin
from tests.admin_pages import shown_ids
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

URL = "/admin/diagnosis/diagnosissession/"
ROWS = 11  # 2 a page: the real last page is page 6, with one row
ESTIMATE = 100  # what the statistics say: 50 pages

_PAGE_LINK = re.compile(r'<a href="\?p=(\d+)"')
_THIS_PAGE = re.compile(r'<span class="this-page">(\d+)</span>')


@pytest.fixture
def too_high_estimate(monkeypatch) -> None:
    monkeypatch.setattr(EstimatedCountPaginator, "cap", 5)
    monkeypatch.setattr(DiagnosisSessionAdmin, "list_per_page", 2)
    monkeypatch.setattr("config.admin_paginator.table_row_estimate", lambda queryset: ESTIMATE)
    DiagnosisSessionFactory.create_batch(ROWS)


def linked_pages(response: HttpResponse) -> list[int]:
    return [int(p) for p in _PAGE_LINK.findall(response.content.decode())]


def current_page(response: HttpResponse) -> int:
    [number] = _THIS_PAGE.findall(response.content.decode())
    return int(number)


def text_of(response: HttpResponse) -> str:
    return " ".join(response.content.decode().split())


@pytest.mark.usefixtures("too_high_estimate")
def test_the_first_page_shows_the_estimate(admin_client) -> None:
    response = admin_client.get(URL)

    assert "≈ 100 diagnosis sessions" in text_of(response)
    assert max(linked_pages(response)) == 50


@pytest.mark.usefixtures("too_high_estimate")
def test_every_page_link_of_the_first_page_opens_a_page_with_rows(admin_client) -> None:
    links = linked_pages(admin_client.get(URL))

    for number in links:
        response = admin_client.get(URL, {"p": number})
        assert response.status_code == 200, number
        assert shown_ids(response), number


@pytest.mark.usefixtures("too_high_estimate")
@pytest.mark.parametrize("asked", [7, 20, 39, 40, 49, 50])
def test_a_page_past_the_real_end_shows_the_real_last_page(admin_client, asked) -> None:
    last = admin_client.get(URL, {"p": 6})

    response = admin_client.get(URL, {"p": asked})

    assert response.status_code == 200
    assert shown_ids(response) == shown_ids(last) != []
    assert current_page(response) == 6
    assert f"{ROWS} diagnosis sessions" in text_of(response)
    assert "≈" not in text_of(response)
    assert max(linked_pages(response)) == 5


@pytest.mark.usefixtures("too_high_estimate")
def test_the_real_last_page_offers_no_page_past_it(admin_client) -> None:
    response = admin_client.get(URL, {"p": 6})

    assert len(shown_ids(response)) == 1
    assert current_page(response) == 6
    assert max(linked_pages(response)) == 5
    assert f"{ROWS} diagnosis sessions" in text_of(response)


@pytest.mark.usefixtures("too_high_estimate")
def test_a_full_page_before_the_real_end_keeps_the_estimate(admin_client) -> None:
    response = admin_client.get(URL, {"p": 5})

    assert len(shown_ids(response)) == 2
    assert current_page(response) == 5
    assert "≈ 100 diagnosis sessions" in text_of(response)


@pytest.mark.usefixtures("too_high_estimate")
def test_a_filtered_list_still_reopens_for_a_page_it_does_not_have(admin_client) -> None:
    # Its count is never an estimate: no link of its own leads past its end.
    response = admin_client.get(URL, {"status__exact": "RUNNING", "p": 50})

    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")


@pytest.mark.usefixtures("too_high_estimate")
def test_finding_the_real_end_reads_a_bounded_number_of_statements(
    admin_client, django_assert_max_num_queries
) -> None:
    admin_client.get(URL, {"p": 1})

    with django_assert_max_num_queries(25):
        admin_client.get(URL, {"p": 20})


def giving_up_above(monkeypatch, limit: int) -> None:
    """The count of more than `limit` rows takes longer than the list waits for."""
    read_keys = admin_paginator.capped_keys

    def capped_keys(queryset, *, cap: int, seconds: float):  # type: ignore[no-untyped-def]
        return None if cap > limit else read_keys(queryset, cap=cap, seconds=seconds)

    monkeypatch.setattr("config.admin_paginator.capped_keys", capped_keys)


@pytest.mark.usefixtures("too_high_estimate")
def test_a_short_page_of_a_list_too_long_to_count_gives_the_exact_count(
    admin_client, monkeypatch
) -> None:
    monkeypatch.setattr("config.admin_paginator.table_row_estimate", lambda queryset: 12)
    giving_up_above(monkeypatch, 20)

    response = admin_client.get(URL, {"p": 6})

    assert len(shown_ids(response)) == 1
    assert f"{ROWS} diagnosis sessions" in text_of(response)
    assert max(linked_pages(response)) == 5


@pytest.mark.usefixtures("too_high_estimate")
def test_an_empty_page_of_a_list_too_long_to_count_reopens_the_list(
    admin_client, monkeypatch
) -> None:
    giving_up_above(monkeypatch, 40)

    response = admin_client.get(URL, {"p": 50})

    # Where the end is cannot be known in time: not an empty page claiming more.
    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")
