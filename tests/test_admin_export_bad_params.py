"""An export link with a filter its list does not know, or a value the filter refuses (a
stale bookmark, a hand-edited URL), answers 400 with one plain line naming the
parameter: never a 500. The list page sends the same URL to `?e=1`; a download link,
often fetched by a script, is told what is wrong instead."""

import csv
import io

import pytest

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

EXPORTS = [
    f"/admin/export/{name}.{fmt}" for name in ("cases", "bad_cases") for fmt in ("csv", "jsonl")
]

# Each list's filters with a value they cannot take: a lookup the list does not allow, a
# value a field refuses, and a value none of the list's own filters' choices has (a stale
# link; applied as no filter, it exported the whole list).
OWN_FILTERS = {
    "cases": [
        "fault_category",
        "still_general",
        "session_not_useful",
        "reuse",
        "near_duplicates",
    ],
    "bad_cases": ["review_state", "disagreement", "assignee", "tag"],
}
REFUSED = {
    "cases": [
        ("bogus", "1"),
        ("created_at__gte", "banana"),
        ("updated_at__year", "abc"),
        ("title__contains", "disk"),
        *((key, "banana") for key in OWN_FILTERS["cases"]),
    ],
    "bad_cases": [
        ("bogus", "1"),
        ("score_band", "banana"),
        ("created_at__gte", "banana"),
        ("created_at__lt", "2024-13-45"),
        ("created_at__year", "abc"),
        # A pattern or a range on a field no filter of the list offers.
        ("query__regex", "disk"),
        ("id__gt", "1"),
        *((key, "banana") for key in OWN_FILTERS["bad_cases"]),
    ],
}
# Parameters that take any value: a field's value no row has (no rows), the order and the
# page (an export holds every page, in the list's order).
TAKEN = {
    "cases": ["source_type", "o", "p"],
    "bad_cases": ["feedback", "o", "p"],
}


@pytest.fixture(autouse=True)
def rows(db) -> None:  # type: ignore[no-untyped-def]
    CaseLibraryFactory()
    DiagnosisSessionFactory(not_useful=True, evidence_score=70)


def refused(url: str) -> list[tuple[str, str, str]]:
    name = url.rsplit("/", 1)[1].split(".")[0]
    return [(url, key, value) for key, value in REFUSED[name]]


def taken(url: str) -> list[tuple[str, str]]:
    name = url.rsplit("/", 1)[1].split(".")[0]
    return [(url, key) for key in TAKEN[name]]


def body(response) -> str:  # type: ignore[no-untyped-def]
    return b"".join(response.streaming_content).decode("utf-8-sig")


@pytest.mark.parametrize(("url", "key", "value"), [c for u in EXPORTS for c in refused(u)])
def test_a_filter_the_list_refuses_is_a_400_naming_it(admin_client, url, key, value) -> None:
    response = admin_client.get(url, {key: value})

    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode()
    assert key in text and "export" in text.lower()
    assert len(text.splitlines()) == 1


@pytest.mark.parametrize(("url", "key"), [c for u in EXPORTS for c in taken(u)])
def test_any_value_of_a_filter_that_takes_any_exports(admin_client, url, key) -> None:
    response = admin_client.get(url, {key: "banana"})

    assert response.status_code == 200
    body(response)


def test_only_the_refused_parameter_is_named(admin_client) -> None:
    response = admin_client.get(
        "/admin/export/bad_cases.csv", {"review_state": "open", "score_band": "banana"}
    )

    assert response.status_code == 400
    text = response.content.decode()
    assert "score_band" in text and "review_state" not in text


def test_every_refused_parameter_is_named(admin_client) -> None:
    response = admin_client.get("/admin/export/cases.csv", {"bogus": "1", "other": "2"})

    assert response.status_code == 400
    assert "bogus" in response.content.decode() and "other" in response.content.decode()


def test_an_export_from_a_page_of_the_list_exports_every_page_even_one_now_gone(
    admin_client,
) -> None:
    # The list shows 50 a page; its export links carry the page it was on.
    for _ in range(50):
        DiagnosisSessionFactory(not_useful=True)

    response = admin_client.get("/admin/export/bad_cases.csv", {"p": "9"})

    assert response.status_code == 200
    assert len(list(csv.DictReader(io.StringIO(body(response))))) == 51


def test_a_lookup_the_list_does_not_allow_stays_djangos_400(admin_client) -> None:
    # Reaching through a relation the list does not filter on: a suspicious operation,
    # refused and logged by Django before any filter runs.
    assert admin_client.get("/admin/export/cases.csv", {"diagnosis__query": "x"}).status_code == 400


def test_a_good_filter_still_exports(admin_client) -> None:
    response = admin_client.get("/admin/export/bad_cases.jsonl", {"score_band": "65+"})

    assert response.status_code == 200
    assert response.streaming
