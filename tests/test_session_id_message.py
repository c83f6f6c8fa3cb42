"""An invalid sessionId is refused in the same words wherever the ingest API reads one: in a
request body or in the path. The `message` people read is Chinese; the field's rule in
`errors` is the API's English, for programs (docs/api.md, "Errors")."""

import pytest

from diagnosis.facts_rules import SESSION_ID_INVALID

pytestmark = pytest.mark.django_db

REFUSED = {
    "success": False,
    "message": "请求参数无效",
    "code": "invalid",
    "errors": {"sessionId": [SESSION_ID_INVALID]},
}


@pytest.mark.parametrize("session_id", ["a b", ".."])
def test_starting_a_session_with_an_invalid_id_is_refused_in_the_rule_s_words(
    api, session_id: str
) -> None:
    response = api.post("/api/sessions", {"sessionId": session_id, "query": "q"}, format="json")

    assert response.status_code == 400
    assert response.json() == REFUSED


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/sessions/a%20b", None),
        ("post", "/api/sessions/a%20b/complete", {"status": "FAILED"}),
        (
            "post",
            "/api/sessions/a%20b/tool-invocations",
            {"toolName": "search_logs", "status": "SUCCESS"},
        ),
        ("post", "/api/sessions/a%20b/feedback-token", None),
    ],
)
def test_an_invalid_id_in_the_path_is_refused_in_the_same_words_as_in_a_body(
    api, method: str, path: str, body: dict | None
) -> None:
    response = getattr(api, method)(path, body, format="json")

    assert response.status_code == 400
    assert response.json() == REFUSED
