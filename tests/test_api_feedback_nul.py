"""A NUL character in a reader's words is refused (400, in the contract's shape, nothing
written), as the ingest endpoints refuse one, in the same words: not dropped unseen."""

import json

import pytest
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.utils import translation

from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def nul_refusal(field: str) -> str:
    """The ingest fields' words for a NUL, as the feedback contract speaks: in Chinese."""
    with translation.override("zh-hans"):
        return f"{field} {ProhibitNullCharactersValidator.message}"


@pytest.fixture(autouse=True)
def finished():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="fb-nul", succeeded=True)


@pytest.mark.parametrize("field", ["comment", "correction"])
def test_a_nul_character_in_the_readers_words_is_400_and_writes_nothing(api, field) -> None:
    body = {"sessionId": "fb-nul", "feedback": "not_useful", field: "连接池\u0000耗尽"}

    response = api.post("/api/feedback", json.dumps(body), content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {"success": False, "message": nul_refusal(field), "caseId": None}
    assert DiagnosisSession.objects.get().feedback is None
    assert not FeedbackEntry.objects.exists()


def test_the_ingest_endpoints_refuse_a_nul_in_the_same_words(api) -> None:
    response = api.post("/api/sessions", {"query": "q\u0000"}, format="json")

    assert response.status_code == 400
    # The message the feedback endpoint words in Chinese; the ingest API's field rules are
    # English.
    assert response.json()["errors"] == {"query": ["Null characters are not allowed."]}
    with translation.override("en"):
        assert str(ProhibitNullCharactersValidator.message) == "Null characters are not allowed."


def test_feedback_in_process_refuses_a_nul_in_the_endpoints_words() -> None:
    with pytest.raises(DjangoValidationError) as refusal:
        feedback_submit(session_id="fb-nul", feedback="not_useful", correction="x\x00y")

    assert refusal.value.message_dict == {"correction": [nul_refusal("correction")]}
    assert not FeedbackEntry.objects.exists()
