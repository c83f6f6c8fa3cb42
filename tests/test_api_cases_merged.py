"""GET /api/cases and GET /api/cases/{caseId} after a merge in the admin: the list leaves
the merged case out (its pages neither skip nor repeat a case), the merged case read by
its id names the case it was merged into, and every other case says null."""

import datetime

import pytest
import yaml
from django.utils import timezone
from openapi_schema_validator import OAS30Validator
from openapi_schema_validator import validate as validate_instance
from rest_framework.test import APIClient

from caselibrary.models import CaseLibrary
from caselibrary.services.duplicates import case_merge
from tests.factories import CaseLibraryFactory
from tests.near_duplicates import flag_near_duplicates
from tests.test_openapi import assert_served_as_documented

pytestmark = pytest.mark.django_db

CASES = "/admin/caselibrary/caselibrary/"


def merge(newer: CaseLibrary, older: CaseLibrary) -> None:
    flag_near_duplicates(newer, older)
    case_merge(case_id=newer.pk, other_id=older.pk, updated_by="ops.curator")


def listed_ids(api, limit: int = 200) -> list[str]:  # type: ignore[no-untyped-def]
    """Every caseId the list gives, page after page, following its `next` cursor."""
    ids: list[str] = []
    url = f"/api/cases?limit={limit}"
    while url:
        response = api.get(url)
        assert response.status_code == 200
        body = response.json()
        ids += [case["caseId"] for case in body["results"]]
        url = body["next"]
    return ids


def library(size: int) -> list[CaseLibrary]:
    """`size` cases, newest first as the list orders them, three of each creation time (the
    cursor's position is the time: cases sharing one are told apart by their place)."""
    cases = CaseLibraryFactory.create_batch(size)
    start = timezone.now() - datetime.timedelta(days=1)
    for n, case in enumerate(cases):
        case.created_at = start + datetime.timedelta(minutes=n // 3)
    CaseLibrary.objects.bulk_update(cases, ["created_at"])
    return sorted(cases, key=lambda c: (c.created_at, c.case_id), reverse=True)


def test_a_case_merged_in_the_admin_leaves_the_list_and_names_the_kept_case_when_read(
    api, admin_client
) -> None:
    older = CaseLibraryFactory(title="订单库锁等待超时导致下单失败")
    newer = CaseLibraryFactory(title="订单库锁等待超时，下单失败")
    other = CaseLibraryFactory(title="Kafka consumer lag keeps growing")
    flag_near_duplicates(newer, older)

    admin_client.post(f"{CASES}{newer.pk}/merge/{older.pk}/")

    assert listed_ids(api) == [other.case_id, older.case_id]
    read = api.get(f"/api/cases/{newer.pk}")
    assert read.status_code == 200
    assert read.json()["caseId"] == newer.case_id
    assert read.json()["title"] == "订单库锁等待超时，下单失败"
    assert read.json()["mergedInto"] == older.case_id


def test_every_case_not_merged_says_merged_into_null_on_the_list_and_read_alone(api) -> None:
    older, newer, other = CaseLibraryFactory.create_batch(3)
    merge(newer, older)

    listed = api.get("/api/cases").json()["results"]
    kept = api.get(f"/api/cases/{older.pk}").json()
    alone = api.get(f"/api/cases/{other.pk}").json()

    assert [case["mergedInto"] for case in listed] == [None, None]
    assert kept["mergedInto"] is None and alone["mergedInto"] is None
    assert list(kept) == list(listed[0]) == list(api.get(f"/api/cases/{newer.pk}").json())


def test_a_case_merged_into_one_that_is_merged_later_names_the_case_kept_last(api) -> None:
    oldest, middle, newest = CaseLibraryFactory.create_batch(3)
    CaseLibrary.objects.filter(pk=middle.pk).update(
        created_at=oldest.created_at + datetime.timedelta(seconds=1)
    )
    CaseLibrary.objects.filter(pk=newest.pk).update(
        created_at=oldest.created_at + datetime.timedelta(seconds=2)
    )
    merge(newest, middle)
    merge(middle, oldest)

    assert listed_ids(api) == [oldest.case_id]
    assert api.get(f"/api/cases/{newest.pk}").json()["mergedInto"] == oldest.case_id
    assert api.get(f"/api/cases/{middle.pk}").json()["mergedInto"] == oldest.case_id


@pytest.mark.parametrize("limit", [1, 2, 3, 4])
def test_pages_read_with_the_cursor_hold_each_case_not_merged_once_in_order(api, limit) -> None:
    cases = library(12)
    # Merged: one at a page's edge, two sharing a creation time with cases that stay.
    for merged in (cases[1], cases[4], cases[5]):
        merge(merged, cases[-1])
    expected = [c.case_id for i, c in enumerate(cases) if i not in (1, 4, 5)]

    assert listed_ids(api, limit) == expected


def test_the_previous_page_of_a_list_with_merged_cases_is_the_page_before(api) -> None:
    cases = library(9)
    merge(cases[3], cases[-1])
    first = api.get("/api/cases?limit=3").json()
    second = api.get(first["next"]).json()

    back = api.get(second["previous"]).json()

    assert [c["caseId"] for c in back["results"]] == [c["caseId"] for c in first["results"]]
    assert cases[3].case_id not in {c["caseId"] for c in first["results"] + second["results"]}


def test_the_list_takes_as_many_queries_for_a_full_page_as_for_a_short_one(
    api, count_statements
) -> None:
    short = library(3)
    merge(short[0], short[-1])
    api.get("/api/cases")  # the first request also reads the key
    with count_statements() as few:
        assert len(api.get("/api/cases?limit=200").json()["results"]) == 2
    full = library(60)
    for case in full[::4]:
        merge(case, full[-1])
    with count_statements() as many:
        assert len(api.get("/api/cases?limit=200").json()["results"]) == 2 + 45

    assert len(many.statements) == len(few.statements) <= 2


def test_reading_a_merged_case_takes_no_more_queries_than_any_other(api, count_statements) -> None:
    older, newer = CaseLibraryFactory.create_batch(2)
    api.get(f"/api/cases/{older.pk}")  # the first request also reads the key
    merge(newer, older)

    with count_statements() as kept:
        api.get(f"/api/cases/{older.pk}")
    with count_statements() as merged:
        api.get(f"/api/cases/{newer.pk}")

    assert len(merged.statements) == len(kept.statements) <= 2


# --- As documented -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi")
    return yaml.safe_load(response.content)


def test_the_list_and_a_merged_case_as_served_match_their_schema(schema, api) -> None:
    older, newer = CaseLibraryFactory.create_batch(2)
    merge(newer, older)

    listed = api.get("/api/cases")
    read = api.get(f"/api/cases/{newer.pk}")

    assert_served_as_documented(schema, "/api/cases", "get", listed)
    assert_served_as_documented(schema, "/api/cases/{caseId}", "get", read)
    case = schema["components"]["schemas"]["CaseOutput"]["properties"]["mergedInto"]
    assert case["nullable"] is True and case["format"] == "uuid"
    validate_instance(read.json()["mergedInto"], case, cls=OAS30Validator)
    assert "merged" in case["description"]
    assert "merged" in schema["paths"]["/api/cases"]["get"]["description"]
