"""POST /api/feedback with a comment or correction of characters that show nothing (zero-width
space, zero-width joiner, the byte-order mark, the word joiner), alone or among blanks: no
words given, as with blanks alone, so no row of history (the admin showed an empty comment).
Words that are there lose those characters at their ends only; blanks around them stay."""

import pytest

from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
RECORDED = {"success": True, "message": "反馈已记录", "caseId": None}

NOTHING_TO_SEE = [
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u2060",
    "\u200b\u200d\ufeff\u2060",
    " \u200b ",
    "\n\ufeff\t\u3000\u2060\r\n",
]


@pytest.fixture
def finished() -> DiagnosisSession:
    return DiagnosisSessionFactory(session_id="unseen-1", succeeded=True)


def send(client, **words: object):  # type: ignore[no-untyped-def]
    body = {"sessionId": "unseen-1", "feedback": "not_useful", **words}
    return client.post(URL, body, format="json")


@pytest.mark.parametrize("unseen", NOTHING_TO_SEE)
def test_a_comment_of_invisible_characters_alone_is_feedback_without_words(
    api, finished, unseen
) -> None:
    response = send(api, comment=unseen)

    assert response.status_code == 200
    assert response.json() == RECORDED
    assert DiagnosisSession.objects.get().feedback == "not_useful"
    assert not FeedbackEntry.objects.exists()


@pytest.mark.parametrize("unseen", NOTHING_TO_SEE)
def test_a_correction_of_invisible_characters_alone_is_no_words_either(
    api, finished, unseen
) -> None:
    response = send(api, correction=unseen)

    assert response.status_code == 200
    assert not FeedbackEntry.objects.exists()


def test_an_invisible_comment_beside_a_reason_keeps_the_reason_alone(api, finished) -> None:
    response = send(api, reason="outdated", comment="\u200b\ufeff", correction=" \u2060 ")

    assert response.status_code == 200
    entry = FeedbackEntry.objects.get()
    assert (entry.reason, entry.comment, entry.correction) == ("outdated", "", "")


def test_invisible_characters_at_the_ends_of_words_go_and_the_blanks_stay(api, finished) -> None:
    response = send(
        api, comment="\ufeff  根因不对\u200b\n\u2060", correction="\u200d1. 扩容\n2. 重启 \u200b"
    )

    assert response.status_code == 200
    entry = FeedbackEntry.objects.get()
    assert (entry.comment, entry.correction) == ("  根因不对\n", "1. 扩容\n2. 重启 ")


def test_invisible_characters_inside_the_words_are_kept(api, finished) -> None:
    # A joiner inside an emoji sequence, a zero-width space a reader pasted between words.
    response = send(api, comment="\u200b👩\u200d💻 改\u200b配置\u200b")

    assert response.status_code == 200
    assert FeedbackEntry.objects.get().comment == "👩\u200d💻 改\u200b配置"


def test_the_service_takes_an_invisible_comment_as_none_too(finished) -> None:
    result = feedback_submit(
        session_id="unseen-1", feedback="not_useful", comment="\u200b \ufeff", correction="\u2060"
    )

    assert result.changed
    assert not FeedbackEntry.objects.exists()


def test_an_invisible_comment_over_the_limit_is_still_too_long(api, finished) -> None:
    response = send(api, comment="\u200b" * 2001)

    assert response.status_code == 400
    assert response.json()["message"] == "comment 不能超过 2000 个字符"
    assert DiagnosisSession.objects.get().feedback is None
