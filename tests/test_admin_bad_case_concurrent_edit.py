"""Two operators on one bad case's page: a save writes what that page changed, so a
colleague's save of another field in between survives (the same field: the last save
stands)."""

import html
import re

import pytest
from django.test import Client

from feedback.models import BadCaseReview, ReviewTag
from tests.admin_pages import member_of, reviewer_named
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

FIELDS = ("review_state", "review_note", "review_assignee", "review_tags")
_HIDDEN_INITIAL = re.compile(r'<input type="hidden" name="(initial-[\w-]+)" value="([^"]*)"')


def url(session) -> str:  # type: ignore[no-untyped-def]
    return f"/admin/feedback/badcase/{session.pk}/change/"


def opened(client: Client, session) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """The page's form as a browser would post it back untouched: each field's value,
    and the hidden copies of the values the page showed."""
    response = client.get(url(session))
    form = response.context["adminform"].form
    data: dict[str, list[str]] = {}
    for name in FIELDS:
        value = form[name].value()
        values = value if isinstance(value, list) else [value]
        data[name] = ["" if v is None else str(getattr(v, "pk", v)) for v in values]
    for name, value in _HIDDEN_INITIAL.findall(response.content.decode()):
        # An HTML parser reads a line break in an attribute as LF, whatever was sent;
        # a textarea posts its line breaks as CRLF.
        value = html.unescape(value).replace("\r\n", "\n")
        data.setdefault(name, []).append(value)
    return data


def save(client: Client, session, form: dict[str, list[str]], **changes: object) -> None:  # type: ignore[no-untyped-def]
    posted = {**form}
    for name, value in changes.items():
        posted[name] = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    response = client.post(url(session), posted)
    assert response.status_code == 302, response.context["adminform"].form.errors


@pytest.fixture
def reviewer() -> Client:
    return member_of("reviewer", "ops.li")


def test_a_state_change_keeps_the_note_a_colleague_saved_meanwhile(admin_client, reviewer) -> None:
    session = DiagnosisSessionFactory(not_useful=True)
    seen_by_reviewer = opened(reviewer, session)
    save(
        admin_client,
        session,
        opened(admin_client, session),
        review_state="triaged",
        review_note="检索没有命中 runbook",
    )

    save(reviewer, session, seen_by_reviewer, review_state="resolved")

    review = BadCaseReview.objects.get(session_id=session.session_id)
    assert (review.state, review.note, review.reviewed_by) == (
        "resolved",
        "检索没有命中 runbook",
        "ops.li",
    )


def test_a_note_change_keeps_the_state_a_colleague_saved_meanwhile(admin_client, reviewer) -> None:
    review = BadCaseReviewFactory(state="new", note="")
    seen_by_reviewer = opened(reviewer, review.session)
    seen_by_admin = opened(admin_client, review.session)
    save(admin_client, review.session, seen_by_admin, review_state="resolved")
    first_review_at = BadCaseReview.objects.get(pk=review.pk).reviewed_at

    save(reviewer, review.session, seen_by_reviewer, review_note="the index was stale")

    review.refresh_from_db()
    assert (review.state, review.note, review.reviewed_by) == (
        "resolved",
        "the index was stale",
        "ops.li",
    )
    assert review.reviewed_at >= first_review_at


def test_a_review_save_keeps_the_assignee_and_tags_a_colleague_set_meanwhile(
    admin_client, reviewer
) -> None:
    colleague = reviewer_named("ops.wang")
    dns = ReviewTag.objects.create(name="dns")
    session = DiagnosisSessionFactory(not_useful=True)
    seen_by_reviewer = opened(reviewer, session)
    save(
        admin_client,
        session,
        opened(admin_client, session),
        review_assignee=colleague.pk,
        review_tags=[dns.pk],
    )

    save(reviewer, session, seen_by_reviewer, review_state="triaged")

    review = BadCaseReview.objects.get(session_id=session.session_id)
    assert (review.state, review.assignee, list(review.tags.all())) == ("triaged", colleague, [dns])


def test_a_tag_change_keeps_the_assignee_and_a_new_assignee_keeps_the_tags(
    admin_client, reviewer
) -> None:
    colleague = reviewer_named("ops.wang")
    dns, db = ReviewTag.objects.create(name="dns"), ReviewTag.objects.create(name="db-lock")
    review = BadCaseReviewFactory(state="triaged", note="looked at it")
    review.tags.add(dns)
    seen_by_reviewer = opened(reviewer, review.session)
    seen_by_admin = opened(admin_client, review.session)

    save(admin_client, review.session, seen_by_admin, review_assignee=colleague.pk)
    save(reviewer, review.session, seen_by_reviewer, review_tags=[dns.pk, db.pk])

    review.refresh_from_db()
    assert review.assignee == colleague
    assert set(review.tags.all()) == {dns, db}
    # Neither touched the review itself: it is still the first reviewer's.
    assert (review.state, review.note, review.reviewed_by) == (
        "triaged",
        "looked at it",
        "ops.reviewer",
    )


def test_a_note_with_line_breaks_left_alone_is_not_taken_for_a_change(
    admin_client, reviewer
) -> None:
    review = BadCaseReviewFactory(state="new", note="first line\r\nsecond line")
    seen_by_reviewer = opened(reviewer, review.session)
    # The browser posts the textarea back as it shows it: CRLF line breaks.
    seen_by_reviewer["review_note"] = ["first line\r\nsecond line"]
    save(
        admin_client,
        review.session,
        opened(admin_client, review.session),
        review_note="rewritten by the admin",
    )

    save(reviewer, review.session, seen_by_reviewer, review_state="triaged")

    review.refresh_from_db()
    assert (review.state, review.note) == ("triaged", "rewritten by the admin")


def test_the_same_field_changed_by_both_keeps_the_last_save(admin_client, reviewer) -> None:
    session = DiagnosisSessionFactory(not_useful=True)
    seen_by_reviewer = opened(reviewer, session)
    save(admin_client, session, opened(admin_client, session), review_note="admin's note")

    save(reviewer, session, seen_by_reviewer, review_note="reviewer's note")

    assert BadCaseReview.objects.get(session_id=session.session_id).note == "reviewer's note"
