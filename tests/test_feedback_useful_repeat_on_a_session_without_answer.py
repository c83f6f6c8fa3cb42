"""Repeating useful on a session that has its case answers with that case, answer or
not (an adopted database's sessions may have a case and no answer): only a useful that
would make the case needs the answer."""

import pytest
from django.utils import timezone

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
NO_ANSWER = "这个会话没有答案，不能标记为有用。"


def legacy_session(feedback: str | None, *, with_case: bool = True) -> CaseLibrary | None:
    """As `migrate --fake-initial` leaves a session of the original system: answer NULL."""
    DiagnosisSessionFactory(
        session_id="old-1",
        status="SUCCESS",
        answer=None,
        feedback=feedback,
        feedback_at=timezone.now() if feedback else None,
    )
    if not with_case:
        return None
    return CaseLibraryFactory(diagnosis_id="old-1", source_type="AUTO", created_by="system")


def useful(api):  # type: ignore[no-untyped-def]
    return api.post(URL, {"sessionId": "old-1", "feedback": "useful"}, format="json")


def session_row() -> dict:
    return DiagnosisSession.objects.values("feedback", "feedback_at", "updated_at").get(
        session_id="old-1"
    )


def test_repeating_useful_returns_the_sessions_case_and_inserts_nothing(api) -> None:
    case = legacy_session("useful")
    before = session_row()

    response = useful(api)

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "反馈已记录", "caseId": case.case_id}
    assert list(CaseLibrary.objects.values_list("case_id", flat=True)) == [case.case_id]
    assert session_row() == before


def test_useful_after_not_useful_answers_with_the_case_the_session_has(api) -> None:
    case = legacy_session("not_useful")

    response = useful(api)

    assert response.status_code == 200
    assert response.json()["caseId"] == case.case_id
    assert CaseLibrary.objects.count() == 1
    assert session_row()["feedback"] == "useful"


def test_repeating_useful_on_a_session_without_case_or_answer_changes_nothing(api) -> None:
    legacy_session("useful", with_case=False)
    before = session_row()

    response = useful(api)

    assert response.status_code == 200
    assert response.json()["caseId"] is None
    assert not CaseLibrary.objects.exists()
    assert session_row() == before


@pytest.mark.parametrize("feedback", [None, "not_useful"])
def test_a_first_useful_on_a_session_without_an_answer_is_still_409(api, feedback) -> None:
    legacy_session(feedback, with_case=False)
    before = session_row()

    response = useful(api)

    assert response.status_code == 409
    assert response.json() == {"success": False, "message": NO_ANSWER, "caseId": None}
    assert not CaseLibrary.objects.exists()
    assert session_row() == before
