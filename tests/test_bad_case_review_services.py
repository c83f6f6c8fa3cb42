"""feedback.services: saving one review, marking many bad cases."""

import pytest
from django.core.exceptions import ValidationError

from feedback.models import BadCase, BadCaseReview
from feedback.selectors import REVIEW_STATE, bad_cases_open_count
from feedback.services import bad_case_review_save, bad_cases_mark
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def test_a_first_review_creates_the_row_with_who_and_when() -> None:
    session = DiagnosisSessionFactory(not_useful=True)

    review = bad_case_review_save(
        session_id=session.session_id, state="triaged", note="n", reviewer="ops.li"
    )

    stored = BadCaseReview.objects.get()
    assert stored == review
    assert (stored.state, stored.note, stored.reviewed_by) == ("triaged", "n", "ops.li")
    assert stored.reviewed_at is not None


def test_a_second_review_updates_the_same_row() -> None:
    review = BadCaseReviewFactory(state="triaged", note="first")

    bad_case_review_save(
        session_id=review.session_id, state="resolved", note="second", reviewer="ops.wang"
    )

    stored = BadCaseReview.objects.get()
    assert (stored.state, stored.note, stored.reviewed_by) == ("resolved", "second", "ops.wang")


@pytest.mark.parametrize("feedback", [None, "useful"])
def test_only_bad_cases_can_be_reviewed(feedback) -> None:
    session = DiagnosisSessionFactory(succeeded=True, feedback=feedback)

    with pytest.raises(ValidationError):
        bad_case_review_save(session_id=session.session_id, state="triaged", note="", reviewer="x")

    assert not BadCaseReview.objects.exists()


def test_an_unknown_state_is_refused() -> None:
    session = DiagnosisSessionFactory(not_useful=True)

    with pytest.raises(ValidationError):
        bad_case_review_save(session_id=session.session_id, state="closed", note="", reviewer="x")
    with pytest.raises(ValidationError):
        bad_cases_mark(session_ids=[session.session_id], state="closed", reviewer="x")


def test_marking_counts_only_bad_cases_that_change_state() -> None:
    fresh = DiagnosisSessionFactory(not_useful=True)
    already = BadCaseReviewFactory(state="triaged", reviewed_by="ops.first")
    earlier_new = BadCaseReviewFactory(state="new", note="keep me")
    not_bad = DiagnosisSessionFactory(useful=True)

    changed = bad_cases_mark(
        session_ids=[
            fresh.session_id,
            already.session_id,
            earlier_new.session_id,
            not_bad.session_id,
            fresh.session_id,
        ],
        state="triaged",
        reviewer="ops.second",
    )

    assert changed == 2
    rows = {r.session_id: r for r in BadCaseReview.objects.all()}
    assert set(rows) == {fresh.session_id, already.session_id, earlier_new.session_id}
    assert rows[already.session_id].reviewed_by == "ops.first"
    assert rows[earlier_new.session_id].note == "keep me"
    assert rows[fresh.session_id].reviewed_by == "ops.second"


def test_marking_new_creates_no_rows_for_bad_cases_that_have_none() -> None:
    fresh = DiagnosisSessionFactory(not_useful=True)
    triaged = BadCaseReviewFactory(state="triaged")

    changed = bad_cases_mark(
        session_ids=[fresh.session_id, triaged.session_id], state="new", reviewer="ops"
    )

    assert changed == 1
    assert list(BadCaseReview.objects.values_list("session_id", "state")) == [
        (triaged.session_id, "new")
    ]


def test_marking_works_through_batches(monkeypatch) -> None:
    monkeypatch.setattr("feedback.services.MARK_BATCH", 3)
    sessions = DiagnosisSessionFactory.create_batch(7, not_useful=True)

    changed = bad_cases_mark(
        session_ids=[s.session_id for s in sessions], state="resolved", reviewer="ops"
    )

    assert changed == 7
    assert BadCaseReview.objects.filter(state="resolved").count() == 7


def test_open_bad_cases_are_new_or_triaged_with_or_without_a_review_row() -> None:
    DiagnosisSessionFactory(not_useful=True)
    BadCaseReviewFactory(state="triaged")
    BadCaseReviewFactory(state="new")
    BadCaseReviewFactory(state="resolved")
    DiagnosisSessionFactory(useful=True)
    # A review left behind by a session whose user changed their mind is not a bad case.
    BadCaseReviewFactory(state="resolved", session__feedback="useful")

    straight = BadCase.objects.alias(state=REVIEW_STATE).exclude(state="resolved").count()
    assert bad_cases_open_count() == straight == 3
