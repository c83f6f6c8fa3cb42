"""A body without `feedback` says so, as a body without `sessionId` does: "缺少 <field>"."""

import pytest

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/feedback"
INVALID = "feedback 取值无效，允许的值：useful, not_useful"


@pytest.fixture(autouse=True)
def finished() -> None:
    DiagnosisSessionFactory(session_id="miss-1", succeeded=True)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"sessionId": "miss-1"}, "缺少 feedback"),
        ({"sessionId": "miss-1", "feedback": None}, "缺少 feedback"),
        ({"sessionId": "miss-1", "comment": "没说有没有用"}, "缺少 feedback"),
        ({"feedback": "useful"}, "缺少 sessionId"),
        # sessionId is checked first: a body missing both names it.
        ({}, "缺少 sessionId"),
        ({"sessionId": "miss-1", "feedback": ""}, INVALID),
        ({"sessionId": "miss-1", "feedback": "Useful"}, INVALID),
        ({"sessionId": "miss-1", "feedback": 1}, INVALID),
    ],
)
def test_a_missing_field_is_named_and_a_wrong_value_is_invalid(api, body, message) -> None:
    response = api.post(URL, body, format="json")

    assert response.status_code == 400
    assert response.json() == {"success": False, "message": message, "caseId": None}
    assert DiagnosisSession.objects.get().feedback is None
