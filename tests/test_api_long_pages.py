"""A list page holds rows until their long text (a session's answer, a case's root cause and
solution) passes the page's budget, at least one row; `next` and `previous` go on from where
it stopped, with no row lost or repeated. So a page of 200 sessions whose answers are each
4 MB is not an 800 MB answer built in one worker."""

import pytest

from config.api import NewestFirstCursorPagination
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

BUDGET = 2_500


@pytest.fixture(autouse=True)
def small_budget(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(NewestFirstCursorPagination, "page_max_characters", BUDGET)


def every_page(api, url: str) -> list[dict]:  # type: ignore[no-untyped-def]
    pages = []
    while url:
        body = api.get(url).json()
        pages.append(body)
        url = body["next"]
    return pages


def test_a_page_of_long_answers_stops_at_the_budget_and_next_goes_on_without_gaps(api) -> None:
    for n in range(5):
        DiagnosisSessionFactory(session_id=f"long-{n}", status="SUCCESS", answer="答" * 1_000)

    pages = every_page(api, "/api/sessions?limit=50")

    assert [[row["sessionId"] for row in page["results"]] for page in pages] == [
        ["long-4", "long-3"],
        ["long-2", "long-1"],
        ["long-0"],
    ]
    assert all(row["answer"] == "答" * 1_000 for page in pages for row in page["results"])


def test_a_row_longer_than_the_budget_is_a_page_of_its_own(api) -> None:
    DiagnosisSessionFactory(session_id="huge-0", status="SUCCESS", answer="x" * 10)
    DiagnosisSessionFactory(session_id="huge-1", status="SUCCESS", answer="x" * 5 * BUDGET)
    DiagnosisSessionFactory(session_id="huge-2", status="SUCCESS", answer="x" * 10)

    pages = every_page(api, "/api/sessions")

    assert [[row["sessionId"] for row in page["results"]] for page in pages] == [
        ["huge-2"],
        ["huge-1"],
        ["huge-0"],
    ]


def test_short_rows_fill_the_page_as_the_limit_says(api) -> None:
    for n in range(4):
        DiagnosisSessionFactory(session_id=f"short-{n}", status="SUCCESS", answer="ok")

    body = api.get("/api/sessions?limit=3").json()

    assert [row["sessionId"] for row in body["results"]] == ["short-3", "short-2", "short-1"]


def test_previous_goes_back_over_long_rows_to_the_same_pages(api) -> None:
    for n in range(5):
        DiagnosisSessionFactory(session_id=f"back-{n}", status="SUCCESS", answer="a" * 1_000)
    forward = every_page(api, "/api/sessions")

    back = api.get(forward[-1]["previous"]).json()

    assert [row["sessionId"] for row in back["results"]] == ["back-2", "back-1"]
    again = api.get(back["previous"]).json()
    assert [row["sessionId"] for row in again["results"]] == ["back-4", "back-3"]
    assert again["previous"] is None


def test_a_page_of_long_cases_counts_their_root_cause_and_solution(api) -> None:
    for n in range(3):
        CaseLibraryFactory(title=f"case {n}", root_cause="r" * 700, solution="s" * 700)

    pages = every_page(api, "/api/cases?limit=50")

    assert [[row["title"] for row in page["results"]] for page in pages] == [
        ["case 2"],
        ["case 1"],
        ["case 0"],
    ]
    assert pages[0]["results"][0]["solution"] == "s" * 700
