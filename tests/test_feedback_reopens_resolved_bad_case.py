"""New reader feedback saying an answer is wrong reopens its resolved bad case: the
verdict not_useful arriving, or new words sent with not_useful. A retry does not."""

import pytest
from django.contrib.auth import get_user_model

from diagnosis.models import DiagnosisSession
from feedback.models import BadCaseReview, FeedbackEntry
from feedback.services import feedback_submit
from tests.admin_pages import shown_ids
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
LIST = "/admin/feedback/badcase/"
FIRST = {"sessionId": "re-1", "feedback": "not_useful", "comment": "第一位读者"}
SECOND = {
    "sessionId": "re-1",
    "feedback": "not_useful",
    "reason": "outdated",
    "correction": "第二位读者：正确做法是扩容磁盘",
}


@pytest.fixture
def finished() -> DiagnosisSession:
    return DiagnosisSessionFactory(session_id="re-1", succeeded=True)


def post(api, body: dict) -> None:  # type: ignore[no-untyped-def]
    assert api.post(URL, body, format="json").status_code == 200


def resolve_in_the_admin(admin_client) -> None:  # type: ignore[no-untyped-def]
    session = DiagnosisSession.objects.get(session_id="re-1")
    admin_client.post(
        LIST, {"action": "mark_resolved", "_selected_action": [session.pk], "index": 0}
    )
    assert BadCaseReview.objects.get(session_id="re-1").state == "resolved"


def review() -> BadCaseReview:
    return BadCaseReview.objects.get(session_id="re-1")


def test_a_second_reader_saying_it_is_wrong_puts_a_resolved_bad_case_back_in_the_open_queue(
    api, admin_client, finished
) -> None:
    post(api, FIRST)
    resolve_in_the_admin(admin_client)

    post(api, SECOND)

    assert FeedbackEntry.objects.filter(session_id="re-1").count() == 2
    assert review().state == "new"
    assert shown_ids(admin_client.get(LIST, {"review_state": "open"})) == ["re-1"]
    assert shown_ids(admin_client.get(LIST, {"review_state": "resolved"})) == []


def test_useful_then_not_useful_with_new_words_reopens_a_resolved_bad_case(
    api, admin_client, finished
) -> None:
    post(api, FIRST)
    resolve_in_the_admin(admin_client)

    post(api, {"sessionId": "re-1", "feedback": "useful"})
    post(api, {"sessionId": "re-1", "feedback": "not_useful", "comment": "又错了：磁盘满了"})

    assert review().state == "new"
    assert shown_ids(admin_client.get(LIST, {"review_state": "open"})) == ["re-1"]


def test_reopening_keeps_the_reviewers_note_assignee_tags_and_last_review(api, finished) -> None:
    post(api, FIRST)
    reviewer = get_user_model().objects.create_user("ops.zhao", is_staff=True)
    BadCaseReview.objects.create(
        session_id="re-1",
        state="resolved",
        note="扩容了连接池",
        reviewed_by="ops.zhao",
        assignee=reviewer,
    )
    review().tags.create(name="disk")
    before = BadCaseReview.objects.values("reviewed_by", "reviewed_at").get(session_id="re-1")

    post(api, SECOND)

    reopened = review()
    assert (reopened.state, reopened.note, reopened.assignee) == ("new", "扩容了连接池", reviewer)
    assert [tag.name for tag in reopened.tags.all()] == ["disk"]
    assert (
        BadCaseReview.objects.values("reviewed_by", "reviewed_at").get(session_id="re-1") == before
    )


def test_a_retry_of_the_same_words_writes_nothing_and_does_not_reopen(
    api, admin_client, finished
) -> None:
    post(api, FIRST)
    resolve_in_the_admin(admin_client)

    post(api, FIRST)

    assert FeedbackEntry.objects.filter(session_id="re-1").count() == 1
    assert review().state == "resolved"


def test_plain_not_useful_repeated_on_a_bad_case_does_not_reopen_it(
    api, admin_client, finished
) -> None:
    post(api, FIRST)
    resolve_in_the_admin(admin_client)

    post(api, {"sessionId": "re-1", "feedback": "not_useful"})

    assert review().state == "resolved"


def test_useful_with_words_does_not_reopen(api, admin_client, finished) -> None:
    post(api, FIRST)
    resolve_in_the_admin(admin_client)

    post(api, {"sessionId": "re-1", "feedback": "useful", "comment": "其实有用"})

    assert review().state == "resolved"


@pytest.mark.parametrize("state", ["new", "triaged"])
def test_an_open_review_keeps_its_state(api, state) -> None:
    BadCaseReviewFactory(session__session_id="re-1", state=state)

    post(api, SECOND)

    assert review().state == state


def test_in_process_feedback_reopens_as_the_api_does() -> None:
    BadCaseReviewFactory(session__session_id="re-1", state="resolved")

    feedback_submit(session_id="re-1", feedback="not_useful", correction="是 DNS 的问题")

    assert review().state == "new"


def test_feedback_refused_reopens_nothing(api) -> None:
    BadCaseReviewFactory(session__session_id="re-1", state="resolved")
    DiagnosisSession.objects.filter(session_id="re-1").update(status="RUNNING")

    assert api.post(URL, SECOND, format="json").status_code == 409

    assert review().state == "resolved"
    assert not FeedbackEntry.objects.exists()
