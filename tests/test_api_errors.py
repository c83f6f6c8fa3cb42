"""Every /api/ error is JSON in one shape, whatever DEBUG says."""

import pytest

from diagnosis.models import DiagnosisSession
from diagnosis.selectors import sessions_in_score_band
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("path", ["/api/nope", "/api/sessions/s-1/nope", "/api/feedback/"])
def test_an_unknown_api_path_is_a_json_404(client, settings, debug, path) -> None:
    settings.DEBUG = debug

    response = client.get(path)

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"code": "not_found", "message": "No such endpoint."}


def test_a_failed_session_nobody_scored_is_not_pending_a_score() -> None:
    DiagnosisSessionFactory(session_id="failed", failed=True)
    DiagnosisSessionFactory(session_id="waiting", succeeded=True)

    pending = sessions_in_score_band(DiagnosisSession.objects.all(), band="pending")

    assert list(pending.values_list("session_id", flat=True)) == ["waiting"]
