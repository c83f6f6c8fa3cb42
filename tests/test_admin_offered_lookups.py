"""A list filters by what it offers and by a field's value, nothing else: a pattern or a
range on a field no filter of the list is about (`?query__regex=…`, `?title__contains=…`,
`?id__gt=…`) is refused as a filter the list does not take is, the list reopening
unfiltered at `?e=1` and the export answering 400 naming it. Such a pattern ran over every
row, in the database or, on SQLite, in the web worker. A field's value (a bookmark's
`?session_id=…`) still filters, and a parameter naming no field reopens the list."""

import pytest
from django.contrib import admin

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

SESSIONS = "/admin/diagnosis/diagnosissession/"
BAD_CASES = "/admin/feedback/badcase/"
CASES = "/admin/caselibrary/caselibrary/"
INVOCATIONS = "/admin/diagnosis/toolinvocation/"

NOT_OFFERED = [
    (SESSIONS, "query__regex", "(a+)+$"),
    (SESSIONS, "answer__contains", "disk"),
    (SESSIONS, "id__gt", "1"),
    (SESSIONS, "pk__gte", "1"),
    (SESSIONS, "created_at__year", "2026"),
    (BAD_CASES, "query__iregex", "^disk"),
    (CASES, "title__regex", "disk"),
    (CASES, "root_cause__icontains", "disk"),
    (INVOCATIONS, "tool_name__startswith", "prom"),
    (INVOCATIONS, "session__query__contains", "disk"),
]


@pytest.fixture(autouse=True)
def rows() -> None:
    DiagnosisSessionFactory(session_id="disk-1", query="disk full on node-3", not_useful=True)
    DiagnosisSessionFactory(session_id="cpu-1", query="cpu at 95%", user_id="ops.li")
    CaseLibraryFactory(title="disk full", root_cause="disk full")


@pytest.mark.parametrize(("url", "lookup", "value"), NOT_OFFERED)
def test_a_pattern_or_range_the_list_does_not_offer_reopens_it_unfiltered_and_says_so(
    admin_client, url, lookup, value
) -> None:
    response = admin_client.get(url, {lookup: value}, follow=True)

    assert response.redirect_chain[-1][0].endswith("?e=1")
    assert "it shows every row" in response.content.decode()


@pytest.mark.parametrize(
    ("export", "lookup"),
    [
        ("/admin/export/cases.csv", "title__regex"),
        ("/admin/export/bad_cases.jsonl", "answer__regex"),
    ],
)
def test_an_export_refuses_a_lookup_its_list_does_not_offer_naming_it(
    admin_client, export, lookup
) -> None:
    response = admin_client.get(export, {lookup: "disk"})

    assert response.status_code == 400
    assert lookup in response.content.decode()


@pytest.mark.parametrize(
    ("params", "shown"),
    [
        ({"session_id": "cpu-1"}, ["cpu-1"]),
        ({"user_id": "ops.li"}, ["cpu-1"]),
        ({"status__in": "RUNNING,FAILED"}, ["cpu-1"]),
        ({"pk": "0"}, []),
    ],
)
def test_a_field_s_value_still_filters_as_a_bookmark_has_it(admin_client, params, shown) -> None:
    response = admin_client.get(SESSIONS, params)

    assert response.status_code == 200
    assert [s.session_id for s in response.context["cl"].result_list] == shown


def test_a_parameter_naming_no_field_reopens_the_list_unfiltered(admin_client) -> None:
    response = admin_client.get(CASES, {"utm_source": "mail"}, follow=True)

    assert response.redirect_chain[-1][0].endswith("?e=1")


@pytest.mark.parametrize(
    ("url", "params"),
    [
        (SESSIONS, {"status__exact": "SUCCESS"}),
        (SESSIONS, {"feedback__isnull": "True"}),
        (
            SESSIONS,
            {
                "created_at__gte": "2026-01-01 00:00:00+00:00",
                "created_at__lt": "2027-01-01 00:00:00+00:00",
            },
        ),
        (SESSIONS, {"created_at__isnull": "False"}),
        (CASES, {"source_type__exact": "feedback"}),
        (INVOCATIONS, {"kind__exact": "metrics", "status__exact": "ok"}),
    ],
)
def test_the_lookups_a_list_s_filters_write_still_filter(admin_client, url, params) -> None:
    assert admin_client.get(url, params).status_code == 200


def test_every_list_of_the_service_keeps_to_the_lookups_it_offers() -> None:
    from config.admin_lookups import OfferedLookupsMixin

    ours = {
        model._meta.label: isinstance(model_admin, OfferedLookupsMixin)
        for model, model_admin in admin.site._registry.items()
        if model._meta.app_label not in ("auth",)
    }

    assert ours == dict.fromkeys(ours, True)
