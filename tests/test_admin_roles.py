"""The staff groups a migration makes (reviewer, curator, viewer): what each may see and
do in the console, action by action."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from caselibrary.models import CaseLibrary
from feedback.models import BadCaseReview, FeedbackEntry
from tests.admin_pages import member_of
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FaultCategoryFactory,
    FeedbackEntryFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

BAD_CASES = "/admin/feedback/badcase/"
CASES = "/admin/caselibrary/caselibrary/"
SESSIONS = "/admin/diagnosis/diagnosissession/"


def actions(client: Client, url: str) -> set[str]:
    page = client.get(url).content.decode()
    found = set(re.findall(r'<option value="([a-z_]+)">', page.split('name="action"', 1)[-1]))
    return found if 'name="action"' in page else set()


def act(client: Client, url: str, action: str, *pks: object, **extra: str):  # type: ignore[no-untyped-def]
    return client.post(
        url,
        {"action": action, "_selected_action": [str(pk) for pk in pks], "index": 0, **extra},
        follow=True,
    )


@pytest.fixture
def bad_case():  # type: ignore[no-untyped-def]
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)
    FeedbackEntryFactory(session=session)
    return session


def test_the_migration_makes_the_three_groups() -> None:
    assert set(Group.objects.values_list("name", flat=True)) >= {"reviewer", "curator", "viewer"}


def test_a_viewer_reads_every_queue_and_can_do_nothing(bad_case) -> None:
    case = CaseLibraryFactory()
    viewer = member_of("viewer")

    for url in (BAD_CASES, CASES, SESSIONS, f"{BAD_CASES}{bad_case.pk}/change/"):
        assert viewer.get(url).status_code == 200, url
    assert actions(viewer, BAD_CASES) == set()
    assert actions(viewer, CASES) == set()
    act(viewer, BAD_CASES, "mark_triaged", bad_case.pk)
    act(viewer, BAD_CASES, "assign_to_me", bad_case.pk)
    assert not BadCaseReview.objects.exists()
    response = viewer.post(f"{CASES}{case.pk}/change/", {"title": "改了"})
    assert response.status_code == 403


def test_a_reviewer_works_the_bad_case_queue_but_not_the_case_library(bad_case) -> None:
    CaseLibraryFactory()
    reviewer = member_of("reviewer")

    assert actions(reviewer, BAD_CASES) == {
        "mark_triaged",
        "mark_resolved",
        "assign_to_me",
        "assign_to_chosen",
        "unassign",
        "add_tag",
    }
    assert actions(reviewer, CASES) == set()
    assert actions(reviewer, SESSIONS) == set()

    act(reviewer, BAD_CASES, "assign_to_me", bad_case.pk)
    act(reviewer, BAD_CASES, "mark_triaged", bad_case.pk)
    review = BadCaseReview.objects.get()
    assert (review.assignee, review.state) == (reviewer.user, "triaged")

    act(reviewer, BAD_CASES, "create_case_from_correction", bad_case.pk)
    assert not CaseLibrary.objects.filter(diagnosis_id="bad-1").exists()


def test_a_curator_edits_cases_and_makes_cases_from_corrections_but_does_not_triage(
    bad_case,
) -> None:
    FaultCategoryFactory(code="NETWORK")
    case = CaseLibraryFactory()
    curator = member_of("curator")

    assert actions(curator, BAD_CASES) == {"create_case_from_correction"}
    assert actions(curator, CASES) >= {"set_category", "delete_selected"}
    assert actions(curator, SESSIONS) == {"create_case"}

    act(curator, BAD_CASES, "mark_triaged", bad_case.pk)
    act(curator, BAD_CASES, "assign_to_me", bad_case.pk)
    assert not BadCaseReview.objects.exists()

    act(curator, CASES, "set_category", case.pk, fault_category="NETWORK")
    case.refresh_from_db()
    assert case.fault_category == "NETWORK"
    act(curator, BAD_CASES, "create_case_from_correction", bad_case.pk)
    assert CaseLibrary.objects.filter(diagnosis_id="bad-1", source_type="MANUAL").exists()
    assert FeedbackEntry.objects.count() == 1


def test_staff_outside_every_group_see_no_queue() -> None:
    user = get_user_model().objects.create_user("ops.nobody", is_staff=True)
    client = Client()
    client.force_login(user)

    assert client.get(BAD_CASES).status_code == 403
    assert client.get(CASES).status_code == 403


@pytest.mark.parametrize(
    ("language", "words"), [("zh-hans", "没有权限"), ("en", "Permission denied")]
)
def test_a_page_the_group_does_not_allow_says_so_in_the_consoles_language(
    settings, language, words
) -> None:
    settings.LANGUAGE_CODE = language
    viewer = member_of("viewer")

    response = viewer.get("/admin/diagnosis/apikey/")

    assert response.status_code == 403
    page = response.content.decode()
    assert words in page and 'href="/admin/"' in page
