"""The case-library admin's case page: making and editing cases, who may reach them, the
taxonomy, and a case made from a session with its answer held once."""

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry

from caselibrary.models import CaseLibrary, FaultCategory
from tests import admin_case_pages
from tests.admin_case_pages import LIST
from tests.admin_pages import case_page_post
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

# Fixtures shared with the other modules, taken by name.
library = admin_case_pages.library


CATEGORIES = "/admin/caselibrary/faultcategory/"


def test_a_manual_case_is_made_from_scratch(admin_client) -> None:
    response = admin_client.post(
        f"{LIST}add/",
        {
            "diagnosis": "",
            "title": "Disk full on db-3",
            "fault_category": "CAPACITY",
            "error_code": "",
            "root_cause": "binlogs",
            "solution": "purge binlogs, alert at 80%",
        },
    )

    assert response.status_code == 302
    case = CaseLibrary.objects.get()
    assert (case.source_type, case.diagnosis_id, case.error_code, case.created_by) == (
        "MANUAL",
        None,
        None,
        "admin",
    )
    assert LogEntry.objects.get().action_flag == ADDITION


def test_a_second_case_for_the_same_session_is_refused(admin_client, library) -> None:
    response = admin_client.post(
        f"{LIST}add/",
        {
            "diagnosis": "s-auto",
            "title": "t",
            "fault_category": "GENERAL",
            "root_cause": "r",
            "solution": "s",
        },
    )

    assert response.status_code == 200
    assert "diagnosis" in response.context["adminform"].form.errors
    assert CaseLibrary.objects.count() == 3


def test_editing_a_case_records_who_and_when(admin_client, library) -> None:
    case = library["manual"]
    before = case.updated_at

    response = admin_client.post(
        f"{LIST}{case.pk}/change/",
        {
            "title": "Deadlock on orders",
            "fault_category": "DATABASE",
            "error_code": "ORA-00060",
            "root_cause": case.root_cause,
            "solution": case.solution,
        },
    )

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.title, case.updated_by) == ("Deadlock on orders", "admin")
    assert case.updated_at > before
    assert "Title" in LogEntry.objects.get(action_flag=CHANGE).get_change_message()


def test_the_change_page_shows_source_and_authors_read_only(admin_client, library) -> None:
    response = admin_client.get(f"{LIST}{library['auto'].pk}/change/")

    form = response.context["adminform"].form
    assert set(form.fields) == {"title", "fault_category", "error_code", "root_cause", "solution"}
    assert "s-auto" in text(response)


def test_deleting_a_case_keeps_its_session(admin_client, library) -> None:
    case = library["auto"]

    response = admin_client.post(f"{LIST}{case.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not CaseLibrary.objects.filter(pk=case.pk).exists()
    assert case.diagnosis.__class__.objects.filter(session_id="s-auto").exists()
    assert LogEntry.objects.get().action_flag == DELETION


def test_anonymous_and_non_staff_cannot_reach_the_case_library(
    client, user_client, library
) -> None:
    for visitor in (client, user_client):
        for url in (LIST, f"{LIST}add/", f"{LIST}{library['auto'].pk}/change/", CATEGORIES):
            response = visitor.get(url)
            assert response.status_code == 302
            assert response.url.startswith("/admin/login/")


# --- the taxonomy --------------------------------------------------------------------


def test_operators_extend_the_taxonomy_and_it_is_offered_at_once(admin_client, library) -> None:
    response = admin_client.post(
        f"{CATEGORIES}add/", {"code": "SECURITY", "name": "安全 / Security", "description": "certs"}
    )

    assert response.status_code == 302
    assert FaultCategory.objects.get(code="SECURITY").name == "安全 / Security"
    assert '<option value="SECURITY">' in admin_client.get(LIST).content.decode()


def test_a_category_code_is_fixed_once_made(admin_client) -> None:
    response = admin_client.get(f"{CATEGORIES}DATABASE/change/")

    assert "code" not in response.context["adminform"].form.fields


def test_categories_in_use_and_general_cannot_be_deleted(admin_client, library) -> None:
    FaultCategoryFactory(code="UNUSED")

    for code in ("GENERAL", "DATABASE"):
        # Its page says why (test_admin_category_in_use_delete); nothing is deleted.
        refused = admin_client.post(f"{CATEGORIES}{code}/delete/", {"post": "yes"})
        assert refused["Location"] == f"{CATEGORIES}{code}/change/"
        assert FaultCategory.objects.filter(code=code).exists()
    response = admin_client.post(f"{CATEGORIES}UNUSED/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not FaultCategory.objects.filter(code="UNUSED").exists()


# --- a case made from a session, and the answer held twice ----------------------------------


def test_a_new_case_starts_in_general_not_in_the_first_category(admin_client) -> None:
    FaultCategoryFactory(code="APPLICATION_ERROR")

    form = admin_client.get(f"{LIST}add/").context["adminform"].form

    assert form.initial["fault_category"] == "GENERAL"
    assert 'value="GENERAL" selected' in form.as_p()


def test_a_case_from_a_session_starts_in_general_when_nothing_is_proposed(admin_client) -> None:
    FaultCategoryFactory(code="APPLICATION_ERROR")
    DiagnosisSessionFactory(session_id="s-plain", succeeded=True, query="q", answer="看起来还好")

    form = admin_client.get(f"{LIST}add/?from_session=s-plain").context["adminform"].form

    assert form.initial["fault_category"] == "GENERAL"


def test_a_case_from_a_session_starts_with_what_the_structuring_proposes(admin_client) -> None:
    FaultCategoryFactory(code="DATABASE", keywords="deadlock, 死锁")
    DiagnosisSessionFactory(
        session_id="s-deadlock",
        succeeded=True,
        query="orders 写入失败 ERROR 1213",
        answer="根因：死锁。",
    )

    form = admin_client.get(f"{LIST}add/?from_session=s-deadlock").context["adminform"].form

    assert (form.initial["fault_category"], form.initial["error_code"]) == (
        "DATABASE",
        "ERROR 1213",
    )


@pytest.fixture
def auto_case():  # type: ignore[no-untyped-def]
    answer = "根因：连接池耗尽 UNIQUE-ANSWER-TEXT。\n1. 扩容连接池"
    return CaseLibraryFactory(
        title="Pool exhausted",
        source_type="AUTO",
        created_by="system",
        updated_by="system",
        root_cause=answer,
        solution=answer,
    )


def test_the_case_page_shows_an_answer_held_as_cause_and_solution_once(
    admin_client, auto_case
) -> None:
    response = admin_client.get(f"{LIST}{auto_case.pk}/change/")

    page = response.content.decode()
    assert page.count("UNIQUE-ANSWER-TEXT") == 1
    assert "root cause and solution" in page.lower()
    assert "The same text as the root cause" in page


def test_the_read_only_case_page_shows_it_once_too(staff_client, auto_case) -> None:
    from django.contrib.auth.models import Permission, User

    User.objects.get(username="ops.staff").user_permissions.add(
        Permission.objects.get(codename="view_caselibrary")
    )

    page = staff_client.get(f"{LIST}{auto_case.pk}/change/").content.decode()

    assert page.count("UNIQUE-ANSWER-TEXT") == 1


def test_saving_the_shared_text_unchanged_keeps_both_fields(admin_client, auto_case) -> None:
    response = case_page_post(admin_client, auto_case, fault_category="DATABASE")

    assert response.status_code == 302
    auto_case.refresh_from_db()
    assert auto_case.fault_category == "DATABASE"
    assert auto_case.solution == auto_case.root_cause
    assert "UNIQUE-ANSWER-TEXT" in auto_case.solution


def test_editing_the_shared_text_edits_cause_and_solution_together(admin_client, auto_case) -> None:
    response = case_page_post(admin_client, auto_case, root_cause="连接池太小")

    assert response.status_code == 302
    auto_case.refresh_from_db()
    assert (auto_case.root_cause, auto_case.solution) == ("连接池太小", "连接池太小")


def test_writing_a_solution_of_its_own_splits_the_text(admin_client, auto_case) -> None:
    response = case_page_post(admin_client, auto_case, solution="扩容连接池到 200")

    assert response.status_code == 302
    auto_case.refresh_from_db()
    assert auto_case.solution == "扩容连接池到 200"
    assert "UNIQUE-ANSWER-TEXT" in auto_case.root_cause


def test_a_case_from_a_split_answer_is_proposed_a_category_from_its_solution_too(
    admin_client,
) -> None:
    FaultCategoryFactory(code="FROBNICATOR", keywords="frobnicator")
    DiagnosisSessionFactory(
        session_id="s-split",
        succeeded=True,
        query="q",
        answer="根因：未知。\n处理建议：重启 frobnicator。",
    )

    response = admin_client.get("/admin/caselibrary/caselibrary/add/?from_session=s-split")

    assert response.context["adminform"].form.initial["fault_category"] == "FROBNICATOR"
