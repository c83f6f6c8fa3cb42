"""A list filters by what it offers, nothing else: a lookup in the URL on a field no filter
of the list is about (`?query__regex=…`, `?title__contains=…`) is refused with a 400,
as Django refuses one through a relation, on the page and in its export. A pattern match
ran in the database (or, on SQLite, in the worker) for any staff user who typed one."""

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
    (SESSIONS, "user_id", "ops.li"),
    (SESSIONS, "status__in", "RUNNING,FAILED"),
    (BAD_CASES, "query__iregex", "^disk"),
    (CASES, "title__regex", "disk"),
    (CASES, "root_cause__icontains", "disk"),
    (INVOCATIONS, "tool_name__startswith", "prom"),
]


@pytest.fixture(autouse=True)
def rows() -> None:
    DiagnosisSessionFactory(query="disk full on node-3", not_useful=True)
    CaseLibraryFactory(title="disk full", root_cause="disk full")


@pytest.mark.parametrize(("url", "lookup", "value"), NOT_OFFERED)
def test_a_lookup_the_list_does_not_offer_is_refused(admin_client, url, lookup, value) -> None:
    response = admin_client.get(url, {lookup: value})

    assert response.status_code == 400


@pytest.mark.parametrize(
    ("export", "lookup"),
    [
        ("/admin/export/cases.csv", "title__regex"),
        ("/admin/export/bad_cases.jsonl", "answer__regex"),
    ],
)
def test_an_export_refuses_a_lookup_its_list_does_not_offer(admin_client, export, lookup) -> None:
    response = admin_client.get(export, {lookup: "disk"})

    assert response.status_code == 400


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
