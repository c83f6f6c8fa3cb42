"""A case's and a bad case's history say what changed, and only that: another spelling of
the stored error code, or the stored text typed again with spaces around it, changes
nothing and is no change in the history; a bulk action names the field as the page
names it (Django's form label), in English and in Chinese."""

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.test import Client

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory
from tests.test_admin_case_concurrent_edits import opened_list, opened_page, page_url, row_of

pytestmark = pytest.mark.django_db

CASES = "/admin/caselibrary/caselibrary/"
BAD_CASES = "/admin/feedback/badcase/"


def history(client: Client, url: str) -> str:
    """The history page of the object at `url` (its change page), as an operator reads it."""
    page = client.get(url.replace("/change/", "/history/"))
    assert page.status_code == 200
    return " ".join(page.content.decode().split())


def changes_logged(case: CaseLibrary) -> list[str]:
    entries = LogEntry.objects.filter(object_id=str(case.pk), action_flag=CHANGE)
    return [entry.get_change_message() for entry in entries.order_by("pk")]


@pytest.fixture
def http_504():  # type: ignore[no-untyped-def]
    return CaseLibraryFactory(
        title="Gateway timeout", error_code="HTTP 504", fault_category="GENERAL"
    )


@pytest.mark.usefixtures("admin_in_english")
def test_typing_another_spelling_of_the_stored_error_code_is_no_change_in_the_history(
    admin_client, http_504
) -> None:
    data = opened_page(admin_client, http_504)

    response = admin_client.post(page_url(http_504), {**data, "error_code": "http_504"})

    assert response.status_code == 302
    http_504.refresh_from_db()
    assert http_504.error_code == "HTTP 504"
    assert changes_logged(http_504) == ["No fields changed."]
    assert "Changed Error code" not in history(admin_client, page_url(http_504))


@pytest.mark.usefixtures("admin_in_english")
def test_another_spelling_of_the_error_code_with_a_real_change_names_only_the_real_one(
    admin_client, http_504
) -> None:
    data = opened_page(admin_client, http_504)

    admin_client.post(
        page_url(http_504), {**data, "error_code": "http-504", "title": "Gateway timed out"}
    )

    http_504.refresh_from_db()
    assert (http_504.title, http_504.error_code) == ("Gateway timed out", "HTTP 504")
    assert changes_logged(http_504) == ["Changed Title."]


@pytest.mark.usefixtures("admin_in_english")
def test_a_new_error_code_is_still_a_change_stored_normalised(admin_client, http_504) -> None:
    data = opened_page(admin_client, http_504)

    admin_client.post(page_url(http_504), {**data, "error_code": "http_502"})

    http_504.refresh_from_db()
    assert http_504.error_code == "HTTP 502"
    assert changes_logged(http_504) == ["Changed Error code."]


@pytest.mark.usefixtures("admin_in_english")
def test_the_stored_title_typed_again_with_spaces_around_it_is_no_change(
    admin_client, http_504
) -> None:
    data = opened_page(admin_client, http_504)

    admin_client.post(
        page_url(http_504),
        {**data, "title": "  Gateway timeout  ", "root_cause": f"\n{http_504.root_cause}\n"},
    )

    http_504.refresh_from_db()
    assert http_504.title == "Gateway timeout"
    assert changes_logged(http_504) == ["No fields changed."]


@pytest.mark.usefixtures("admin_in_english")
def test_a_list_row_given_another_spelling_of_its_error_code_is_no_change(
    admin_client, http_504
) -> None:
    data = opened_list(admin_client)
    row = row_of(data, http_504)

    response = admin_client.post(CASES, {**data, f"{row}error_code": "http 504"})

    assert response.status_code == 302
    http_504.refresh_from_db()
    assert http_504.error_code == "HTTP 504"
    assert "Changed Error code." not in changes_logged(http_504)


# --- Bulk actions name the field as the page does ---------------------------------------


def set_category(client: Client, case: CaseLibrary) -> None:
    client.post(
        CASES,
        {
            "action": "set_category",
            "_selected_action": [case.pk],
            "index": 0,
            "fault_category": "DATABASE",
        },
    )


def bad_case_action(client: Client, action: str, session: DiagnosisSession, **extra: str) -> None:
    client.post(
        BAD_CASES,
        {"action": action, "_selected_action": [session.pk], "index": 0, **extra},
        follow=True,
    )


@pytest.mark.usefixtures("admin_in_english")
def test_setting_a_cases_category_in_bulk_reads_as_its_page_would_write_it(
    admin_client, http_504
) -> None:
    FaultCategoryFactory(code="DATABASE")

    set_category(admin_client, http_504)

    assert changes_logged(http_504) == ["Changed Fault category."]
    assert "Changed Fault category." in history(admin_client, page_url(http_504))


@pytest.mark.usefixtures("admin_in_english")
def test_the_bad_case_actions_read_as_the_review_form_would_write_them(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="bad-one", not_useful=True)

    bad_case_action(admin_client, "mark_triaged", session)
    bad_case_action(admin_client, "assign_to_me", session)
    bad_case_action(admin_client, "add_tag", session, tag="db-lock")

    shown = history(admin_client, f"{BAD_CASES}{session.pk}/change/")
    for message in ("Changed Review state.", "Changed Assignee.", "Changed Tags."):
        assert message in shown
    for lower in ("Changed review state.", "Changed assignee.", "Changed tags."):
        assert lower not in shown


def test_the_bulk_actions_history_reads_in_chinese(admin_client, http_504) -> None:
    FaultCategoryFactory(code="DATABASE")
    session = DiagnosisSessionFactory(session_id="bad-two", not_useful=True)

    set_category(admin_client, http_504)
    bad_case_action(admin_client, "mark_triaged", session)
    bad_case_action(admin_client, "assign_to_me", session)
    bad_case_action(admin_client, "add_tag", session, tag="db-lock")

    assert "已修改故障分类。" in history(admin_client, page_url(http_504))
    shown = history(admin_client, f"{BAD_CASES}{session.pk}/change/")
    for message in ("已修改复核状态。", "已修改处理人。", "已修改标签。"):
        assert message in shown


@pytest.mark.usefixtures("admin_in_english")
def test_a_bulk_action_that_changes_nothing_again_adds_nothing_to_the_history(
    admin_client,
) -> None:
    taken = DiagnosisSessionFactory(session_id="bad-taken", not_useful=True)
    fresh = DiagnosisSessionFactory(session_id="bad-fresh", not_useful=True)
    for action, extra in (("assign_to_me", {}), ("add_tag", {"tag": "db-lock"})):
        bad_case_action(admin_client, action, taken, **extra)
        bad_case_action(admin_client, action, taken, **extra)  # already so: no change
    bad_case_action(admin_client, "unassign", fresh)  # nobody had it: no change

    assert changes_logged(taken) == ["Changed Assignee.", "Changed Tags."]
    assert changes_logged(fresh) == []
