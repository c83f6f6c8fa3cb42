"""The case-library admin: curation from the list, filters, bulk category, the taxonomy."""

import re

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry

from caselibrary.models import CaseLibrary, FaultCategory
from tests.admin_pages import case_page_post, list_edit_post
from tests.conftest import on_mysql
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/caselibrary/caselibrary/"
CATEGORIES = "/admin/caselibrary/faultcategory/"


def shown_titles(response) -> list[str]:  # type: ignore[no-untyped-def]
    return re.findall(
        r'<th class="field-title"><a href="[^"]+">([^<]+)</a>', response.content.decode()
    )


def text(response) -> str:  # type: ignore[no-untyped-def]
    return " ".join(response.content.decode().split())


@pytest.fixture
def library():  # type: ignore[no-untyped-def]
    auto = CaseLibraryFactory(
        title="Auto general",
        source_type="AUTO",
        created_by="system",
        updated_by="system",
        diagnosis=DiagnosisSessionFactory(session_id="s-auto", useful=True),
    )
    regretted = CaseLibraryFactory(
        title="Auto regretted",
        source_type="AUTO",
        fault_category="NETWORK",
        diagnosis=DiagnosisSessionFactory(session_id="s-regret", not_useful=True),
    )
    manual = CaseLibraryFactory(
        title="Manual database", fault_category="DATABASE", error_code="ORA-00060"
    )
    return {"auto": auto, "regretted": regretted, "manual": manual}


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
