"""The case-library admin's list: columns, curation from the list, filters, search and the
bulk category."""

import re

import pytest
from django.contrib.admin.models import CHANGE, LogEntry

from caselibrary.models import CaseLibrary
from tests import admin_case_pages
from tests.admin_case_pages import LIST
from tests.admin_pages import list_edit_post
from tests.conftest import on_mysql
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

# Fixtures shared with the other modules, taken by name.
library = admin_case_pages.library


def shown_titles(response) -> list[str]:  # type: ignore[no-untyped-def]
    return re.findall(
        r'<th class="field-title"><a href="[^"]+">([^<]+)</a>', response.content.decode()
    )


def cases_list_post(cases: list[CaseLibrary], **changes: dict) -> dict:  # type: ignore[type-arg]
    """The case list's form as the browser posts it, with `changes` by case pk."""
    rows = []
    for case in cases:
        values = {"fault_category": case.fault_category, "error_code": case.error_code or ""}
        rows.append({"case_id": case.pk, **values, **changes.get(case.pk, {})})
    return list_edit_post(rows)


def test_the_list_shows_the_cases_newest_first(admin_client, library) -> None:
    response = admin_client.get(LIST)

    assert response.status_code == 200
    assert shown_titles(response) == ["Manual database", "Auto regretted", "Auto general"]


def test_the_list_links_each_case_to_its_session_and_flags_regretted_ones(
    admin_client, library
) -> None:
    page = text(admin_client.get(LIST))
    session = library["regretted"].diagnosis

    assert f'<a href="/admin/diagnosis/diagnosissession/{session.pk}/change/">s-regret</a>' in page
    assert '<span class="feedback-not_useful">now not useful</span>' in page
    assert page.count('class="feedback-not_useful"') == 1


def test_a_case_whose_session_is_gone_still_shows_its_session_id(admin_client) -> None:
    CaseLibraryFactory(title="Orphan", diagnosis_id="s-deleted-long-ago")

    assert "s-deleted-long-ago" in text(admin_client.get(LIST))


@pytest.mark.parametrize("extra", [0, 30])
def test_the_list_runs_the_same_few_queries_however_many_rows(
    admin_client, django_assert_num_queries, library, extra
) -> None:
    for _ in range(extra):
        CaseLibraryFactory(diagnosis=DiagnosisSessionFactory(useful=True))

    # Django's session and user, the taxonomy (once, for the filter, the editable column
    # and the action), the count (after the statistics' estimate on MySQL/MariaDB), the
    # page with its sessions joined in.
    with django_assert_num_queries(5 + on_mysql()):
        response = admin_client.get(LIST)

    assert len(shown_titles(response)) == 3 + extra


def test_category_and_error_code_are_edited_from_the_list(admin_client, library) -> None:
    auto = library["auto"]
    cases = list(CaseLibrary.objects.order_by("-created_at"))

    response = admin_client.post(
        LIST,
        cases_list_post(
            cases, **{auto.pk: {"fault_category": "DEPENDENCY", "error_code": "E-REDIS-1"}}
        ),
    )

    assert response.status_code == 302
    auto.refresh_from_db()
    assert (auto.fault_category, auto.error_code, auto.updated_by) == (
        "DEPENDENCY",
        "E-REDIS-1",
        "admin",
    )
    # Only the edited case was saved and logged.
    assert CaseLibrary.objects.get(pk=library["manual"].pk).updated_by == "ops.curator"
    entry = LogEntry.objects.get()
    assert (entry.object_id, entry.action_flag) == (auto.pk, CHANGE)
    assert "Fault category" in entry.get_change_message()


def test_the_list_offers_only_categories_of_the_taxonomy(admin_client, library) -> None:
    auto = library["auto"]
    cases = list(CaseLibrary.objects.order_by("-created_at"))

    response = admin_client.post(
        LIST, cases_list_post(cases, **{auto.pk: {"fault_category": "MADE_UP"}})
    )

    assert response.status_code == 200
    assert CaseLibrary.objects.get(pk=auto.pk).fault_category == "GENERAL"


def test_a_case_filed_under_a_code_outside_the_taxonomy_keeps_it_when_others_are_saved(
    admin_client,
) -> None:
    legacy = CaseLibraryFactory(title="Legacy", fault_category="OLD_CODE")

    page = admin_client.get(LIST).content.decode()

    assert '<option value="OLD_CODE" selected>OLD_CODE</option>' in page
    admin_client.post(LIST, cases_list_post([legacy], **{legacy.pk: {"error_code": "X1"}}))
    legacy.refresh_from_db()
    assert (legacy.fault_category, legacy.error_code) == ("OLD_CODE", "X1")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"fault_category": "DATABASE"}, ["Manual database"]),
        ({"source_type__exact": "AUTO"}, ["Auto regretted", "Auto general"]),
        ({"source_type__exact": "MANUAL"}, ["Manual database"]),
        ({"still_general": "yes"}, ["Auto general"]),
        ({"still_general": "no"}, ["Manual database", "Auto regretted"]),
        ({"session_not_useful": "yes"}, ["Auto regretted"]),
    ],
)
def test_each_filter_lists_only_the_cases_it_picks(admin_client, library, params, expected) -> None:
    response = admin_client.get(LIST, params)

    assert response.status_code == 200
    assert shown_titles(response) == expected


def test_the_category_filter_lists_the_taxonomy(admin_client, library) -> None:
    FaultCategoryFactory(code="SECURITY", name="安全 / Security")

    page = text(admin_client.get(LIST))

    assert "SECURITY · 安全 / Security" in page and "DEPLOYMENT_CONFIG" in page


@pytest.mark.parametrize(
    ("q", "expected"),
    [("regretted", ["Auto regretted"]), ("ORA-000", ["Manual database"]), ("nothing", [])],
)
def test_searching_finds_cases_by_title_and_error_code(admin_client, library, q, expected) -> None:
    assert shown_titles(admin_client.get(LIST, {"q": q})) == expected


def test_a_case_id_or_its_session_id_as_the_api_gives_them_finds_the_case(
    admin_client, library
) -> None:
    manual = library["manual"]

    assert shown_titles(admin_client.get(LIST, {"q": manual.case_id})) == ["Manual database"]
    assert shown_titles(admin_client.get(LIST, {"q": manual.case_id.upper()})) == [
        "Manual database"
    ]
    assert shown_titles(admin_client.get(LIST, {"q": "s-regret"})) == ["Auto regretted"]


def test_bulk_set_category_files_the_cases_and_logs_each(admin_client, library) -> None:
    chosen = [library["auto"], library["regretted"]]

    response = admin_client.post(
        LIST,
        {
            "action": "set_category",
            "fault_category": "CAPACITY",
            "_selected_action": [c.pk for c in chosen],
            "index": 0,
        },
        follow=True,
    )

    assert "2 cases filed under CAPACITY." in text(response)
    for case in chosen:
        case.refresh_from_db()
        assert (case.fault_category, case.updated_by) == ("CAPACITY", "admin")
    assert CaseLibrary.objects.get(pk=library["manual"].pk).fault_category == "DATABASE"
    assert set(LogEntry.objects.values_list("object_id", "action_flag")) == {
        (c.pk, CHANGE) for c in chosen
    }


def test_bulk_set_category_without_a_category_does_nothing(admin_client, library) -> None:
    response = admin_client.post(
        LIST,
        {
            "action": "set_category",
            "fault_category": "",
            "_selected_action": [library["auto"].pk],
            "index": 0,
        },
        follow=True,
    )

    assert "Choose a category" in text(response)
    assert CaseLibrary.objects.get(pk=library["auto"].pk).fault_category == "GENERAL"


def test_bulk_set_category_refuses_a_code_outside_the_taxonomy(admin_client, library) -> None:
    response = admin_client.post(
        LIST,
        {
            "action": "set_category",
            "fault_category": "MADE_UP",
            "_selected_action": [library["auto"].pk],
            "index": 0,
        },
        follow=True,
    )

    assert "not in the fault-category taxonomy" in text(response)
    assert CaseLibrary.objects.get(pk=library["auto"].pk).fault_category == "GENERAL"
    assert not LogEntry.objects.exists()


def test_the_list_shows_source_reuse_and_last_change_in_few_columns(admin_client, library) -> None:
    page = text(admin_client.get(LIST))

    columns = re.findall(r'<th scope="col" class="[^"]*column-(\w+)', page)
    assert columns == [
        "title",
        "fault_category",
        "error_code",
        "source_column",
        "reuse_column",
    ]
    assert "ops.curator" in page  # who changed it last, under its source
