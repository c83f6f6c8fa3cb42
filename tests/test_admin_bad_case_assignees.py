"""Whom a bad case can be given to: active staff who may work the bad-case queue (change
bad cases), in the action bar's "Assign to" and on the bad case's page alike."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client

from feedback.models import BadCaseReview
from feedback.review_queues import bad_cases_assign
from tests.admin_pages import member_of
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

BAD_CASES = "/admin/feedback/badcase/"


def options(page: str, select: str) -> list[str]:
    """The names a <select> offers, the empty choice left out."""
    found = re.search(rf'<select name="{select}"[^>]*>(.*?)</select>', page, re.S)
    assert found, f"no {select} select on the page"
    return [
        name
        for value, name in re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)', found[1])
        if value
    ]


def change_url(session) -> str:  # type: ignore[no-untyped-def]
    return f"{BAD_CASES}{session.pk}/change/"


@pytest.fixture
def staff():  # type: ignore[no-untyped-def]
    """Users of every kind, by what they may do with bad cases."""
    User = get_user_model()
    change_badcase = Permission.objects.get(codename="change_badcase")
    User.objects.create_superuser("boss", is_staff=True)
    for group in ("reviewer", "viewer", "curator"):
        User.objects.create_user(f"in.{group}", is_staff=True).groups.add(
            Group.objects.get(name=group)
        )
    User.objects.create_user("by.hand", is_staff=True).user_permissions.add(change_badcase)
    User.objects.create_user("no.permission", is_staff=True)
    gone = User.objects.create_user("gone.reviewer", is_staff=True, is_active=False)
    gone.groups.add(Group.objects.get(name="reviewer"))
    User.objects.create_user("not.staff").user_permissions.add(change_badcase)


def test_assign_to_offers_only_active_staff_who_may_change_bad_cases(admin_client, staff) -> None:
    DiagnosisSessionFactory(not_useful=True)

    page = admin_client.get(BAD_CASES).content.decode()

    assert options(page, "assignee") == ["admin", "boss", "by.hand", "in.reviewer"]


def test_the_bad_case_page_offers_the_same_assignees(admin_client, staff) -> None:
    session = DiagnosisSessionFactory(not_useful=True)

    page = admin_client.get(change_url(session)).content.decode()

    assert options(page, "review_assignee") == ["admin", "boss", "by.hand", "in.reviewer"]


@pytest.mark.parametrize("who", ["in.viewer", "no.permission", "gone.reviewer", "not.staff"])
def test_bulk_assigning_to_someone_who_may_not_work_the_queue_is_refused(
    admin_client, staff, who
) -> None:
    session = DiagnosisSessionFactory(not_useful=True)
    user = get_user_model().objects.get(username=who)

    page = admin_client.post(
        BAD_CASES,
        {
            "action": "assign_to_chosen",
            "_selected_action": [session.pk],
            "index": 0,
            "assignee": user.pk,
        },
        follow=True,
    ).content.decode()

    assert "Choose a staff user to assign to." in page
    assert not BadCaseReview.objects.filter(assignee__isnull=False).exists()


def test_the_bad_case_page_refuses_an_assignee_who_may_not_work_the_queue(
    admin_client, staff
) -> None:
    session = DiagnosisSessionFactory(not_useful=True)
    viewer = get_user_model().objects.get(username="in.viewer")

    response = admin_client.post(
        change_url(session),
        {"review_state": "new", "review_note": "", "review_assignee": viewer.pk},
    )

    assert response.status_code == 200
    assert "review_assignee" in response.context["adminform"].form.errors
    assert not BadCaseReview.objects.filter(assignee__isnull=False).exists()


def test_a_bad_case_keeps_its_assignee_who_has_since_lost_the_permission(admin_client) -> None:
    reviewer: Client = member_of("reviewer", "ops.li")
    session = DiagnosisSessionFactory(not_useful=True)
    bad_cases_assign(session_ids=[session.session_id], assignee=reviewer.user)  # type: ignore[attr-defined]
    reviewer.user.groups.clear()  # type: ignore[attr-defined]

    response = admin_client.get(change_url(session))
    page = response.content.decode()
    assert "ops.li" in options(page, "review_assignee")
    assert re.search(r'<option value="\d+" selected>ops\.li</option>', page)
    # Still not offered for other bad cases.
    assert "ops.li" not in options(admin_client.get(BAD_CASES).content.decode(), "assignee")

    form = response.context["adminform"].form
    saved = admin_client.post(
        change_url(session),
        {
            "review_state": "triaged",
            "review_note": "looked at it",
            "review_assignee": form["review_assignee"].value(),
        },
    )

    assert saved.status_code == 302, saved.context["adminform"].form.errors
    review = BadCaseReview.objects.get(session_id=session.session_id)
    assert (review.state, review.note, review.assignee) == (
        "triaged",
        "looked at it",
        reviewer.user,  # type: ignore[attr-defined]
    )
