"""POST /api/feedback with a comment or correction of nothing but spaces: no words given,
so no row of history (the admin showed an empty one). Words that are there are kept as
typed, spaces around them included."""

import pytest

from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
RECORDED = {"success": True, "message": "反馈已记录", "caseId": None}


@pytest.fixture
def finished() -> DiagnosisSession:
    return DiagnosisSessionFactory(session_id="blank-1", succeeded=True)


def send(client, **words: object):  # type: ignore[no-untyped-def]
    body = {"sessionId": "blank-1", "feedback": "not_useful", **words}
    return client.post(URL, body, format="json")


def test_a_comment_of_spaces_alone_is_feedback_without_words(api, finished) -> None:
    response = send(api, comment="   ")

    assert response.status_code == 200
    assert response.json() == RECORDED
    assert DiagnosisSession.objects.get().feedback == "not_useful"
    assert not FeedbackEntry.objects.exists()


def test_a_comment_and_a_correction_of_any_blank_characters_are_no_words(api, finished) -> None:
    # Tabs, line breaks and the full-width space a Chinese keyboard types.
    response = send(api, comment=" \n\t\u3000 ", correction="\r\n  ")

    assert response.status_code == 200
    assert response.json() == RECORDED
    assert not FeedbackEntry.objects.exists()


def test_a_blank_comment_beside_a_reason_keeps_the_reason_alone(api, finished) -> None:
    response = send(api, reason="outdated", comment="   ", correction="  ")

    assert response.status_code == 200
    entry = FeedbackEntry.objects.get()
    assert (entry.reason, entry.comment, entry.correction) == ("outdated", "", "")


def test_words_with_spaces_around_them_are_kept_as_typed(api, finished) -> None:
    response = send(api, comment="  根因不对\n", correction="\n1. 扩容\n2. 重启  ")

    assert response.status_code == 200
    entry = FeedbackEntry.objects.get()
    assert (entry.comment, entry.correction) == ("  根因不对\n", "\n1. 扩容\n2. 重启  ")


def test_the_service_takes_a_blank_comment_as_none_too(finished) -> None:
    result = feedback_submit(session_id="blank-1", feedback="not_useful", comment="   ")

    assert result.changed
    assert not FeedbackEntry.objects.exists()


def test_a_blank_comment_over_the_limit_is_still_too_long(api, finished) -> None:
    response = send(api, comment=" " * 2001)

    assert response.status_code == 400
    assert response.json()["message"] == "comment 不能超过 2000 个字符"
    assert DiagnosisSession.objects.get().feedback is None


@pytest.mark.parametrize("feedback", ["not_useful", "useful"])
def test_an_empty_reason_is_no_reason_as_null_is(api, finished, feedback) -> None:
    # An HTML form's "no choice" option sends "": it reads as a reason left out.
    response = send(api, feedback=feedback, reason="")

    assert response.status_code == 200
    assert DiagnosisSession.objects.get().feedback == feedback
    assert not FeedbackEntry.objects.exists()


def test_a_reason_of_blanks_is_still_refused(api, finished) -> None:
    response = send(api, reason=" ")

    assert response.status_code == 400
    assert response.json()["message"].startswith("reason 取值无效")
    assert DiagnosisSession.objects.get().feedback is None
