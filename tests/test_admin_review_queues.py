"""Bad-case review queues: who has which bad case, its tags, and the filters over them."""

import pytest
from django.contrib.auth import get_user_model

from feedback.models import BadCaseReview
from feedback.review_queues import bad_cases_assign, bad_cases_tag
from tests.admin_pages import reviewer_named, shown_ids
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/feedback/badcase/"


def act(client, action: str, *session_ids: str, **extra: object):  # type: ignore[no-untyped-def]
    from diagnosis.models import DiagnosisSession

    pks = DiagnosisSession.objects.filter(session_id__in=session_ids).values_list("pk", flat=True)
    return client.post(
        LIST,
        {"action": action, "_selected_action": list(pks), "index": 0, **extra},
        follow=True,
    )


@pytest.fixture
def queue(admin_user):  # type: ignore[no-untyped-def]
    colleague = reviewer_named("ops.wang")
    DiagnosisSessionFactory(session_id="bad-fresh", not_useful=True)
    BadCaseReviewFactory(session__session_id="bad-reviewed", state="triaged")
    mine = DiagnosisSessionFactory(session_id="bad-mine", not_useful=True)
    theirs = DiagnosisSessionFactory(session_id="bad-theirs", not_useful=True)
    DiagnosisSessionFactory(session_id="fine", useful=True)
    bad_cases_assign(session_ids=[mine.session_id], assignee=admin_user)
    bad_cases_assign(session_ids=[theirs.session_id], assignee=colleague)
    return colleague


def test_my_queue_and_the_unassigned_queue(admin_client, queue) -> None:
    assert shown_ids(admin_client.get(LIST, {"assignee": "me"})) == ["bad-mine"]
    assert set(shown_ids(admin_client.get(LIST, {"assignee": "none"}))) == {
        "bad-fresh",
        "bad-reviewed",
    }


def test_assign_to_me_takes_bad_cases_from_the_unassigned_queue(admin_client, queue) -> None:
    page = act(admin_client, "assign_to_me", "bad-fresh", "bad-reviewed").content.decode()

    assert "2 bad cases assigned to admin." in page
    assert set(shown_ids(admin_client.get(LIST, {"assignee": "me"}))) == {
        "bad-fresh",
        "bad-mine",
        "bad-reviewed",
    }
    # Assigning is not reviewing: the state and the reviewer stay.
    assert BadCaseReview.objects.get(session_id="bad-reviewed").state == "triaged"
    assert BadCaseReview.objects.get(session_id="bad-fresh").state == "new"


def test_bulk_assign_to_a_chosen_colleague(admin_client, queue) -> None:
    page = act(
        admin_client, "assign_to_chosen", "bad-fresh", "bad-mine", "fine", assignee=queue.pk
    ).content.decode()

    assert "2 bad cases assigned to ops.wang." in page
    assert set(
        BadCaseReview.objects.filter(assignee=queue).values_list("session_id", flat=True)
    ) == {"bad-fresh", "bad-mine", "bad-theirs"}
    # Not a bad case: no review row made for it.
    assert not BadCaseReview.objects.filter(session_id="fine").exists()


def test_assigning_without_choosing_a_colleague_says_so(admin_client, queue) -> None:
    page = act(admin_client, "assign_to_chosen", "bad-fresh").content.decode()

    assert "Choose a staff user to assign to." in page
    assert not BadCaseReview.objects.filter(session_id="bad-fresh").exists()


def test_a_user_who_is_not_staff_cannot_be_chosen(admin_client, queue) -> None:
    outsider = get_user_model().objects.create_user("someone")

    page = act(admin_client, "assign_to_chosen", "bad-fresh", assignee=outsider.pk)

    assert "Choose a staff user to assign to." in page.content.decode()


def test_unassign_puts_bad_cases_back(admin_client, queue) -> None:
    act(admin_client, "unassign", "bad-mine", "bad-theirs")

    assert set(shown_ids(admin_client.get(LIST, {"assignee": "none"}))) == {
        "bad-fresh",
        "bad-reviewed",
        "bad-mine",
        "bad-theirs",
    }


def test_tags_make_queues_of_their_own(admin_client, queue) -> None:
    page = act(admin_client, "add_tag", "bad-fresh", "bad-mine", tag="dns").content.decode()
    bad_cases_tag(session_ids=["bad-mine"], tag="需要-runbook")

    assert "2 bad cases tagged dns." in page
    assert set(shown_ids(admin_client.get(LIST, {"tag": "dns"}))) == {"bad-fresh", "bad-mine"}
    assert shown_ids(admin_client.get(LIST, {"tag": "需要-runbook"})) == ["bad-mine"]
    listing = admin_client.get(LIST).content.decode()
    assert '<span class="review-tag">dns</span>' in listing
    # Tagging twice adds nothing.
    assert bad_cases_tag(session_ids=["bad-mine"], tag="dns") == []


def test_a_tag_that_is_not_a_slug_is_refused(admin_client, queue) -> None:
    page = act(admin_client, "add_tag", "bad-fresh", tag="two words").content.decode()

    assert "Type a tag (letters, digits, - and _) to add." in page


def test_the_review_form_sets_assignee_and_tags(admin_client, queue) -> None:
    from diagnosis.models import DiagnosisSession
    from feedback.models import ReviewTag

    dns = ReviewTag.objects.create(name="dns")
    session = DiagnosisSession.objects.get(session_id="bad-fresh")

    admin_client.post(
        f"{LIST}{session.pk}/change/",
        {
            "review_state": "new",
            "review_note": "",
            "review_assignee": queue.pk,
            "review_tags": [dns.pk],
        },
    )

    review = BadCaseReview.objects.get(session_id="bad-fresh")
    assert (review.assignee, list(review.tags.all()), review.reviewed_by) == (queue, [dns], "")


def test_assigning_and_tagging_are_kept_in_each_bad_cases_history(admin_client, queue) -> None:
    from diagnosis.models import DiagnosisSession

    act(admin_client, "assign_to_me", "bad-fresh")
    act(admin_client, "add_tag", "bad-fresh", tag="db-lock")

    pk = DiagnosisSession.objects.get(session_id="bad-fresh").pk
    history = " ".join(admin_client.get(f"{LIST}{pk}/history/").content.decode().split())
    assert "Changed Assignee." in history
    assert "Changed Tags." in history
