"""POST /api/sessions: an agent opens a session."""

import uuid

import pytest

from diagnosis.models import DiagnosisSession

pytestmark = pytest.mark.django_db


def test_starting_a_session_returns_it_running(api) -> None:
    response = api.post(
        "/api/sessions",
        {"sessionId": "s-1", "query": "MySQL 主从延迟 300 秒怎么办？", "userId": "ops.li"},
        format="json",
    )

    assert response.status_code == 201
    body = response.json()
    assert list(body) == [
        "sessionId",
        "query",
        "userId",
        "status",
        "answer",
        "selfEvaluation",
        "feedback",
        "feedbackAt",
        "caseId",
        "createdAt",
        "finishedAt",
    ]
    assert body["sessionId"] == "s-1"
    assert body["query"] == "MySQL 主从延迟 300 秒怎么办？"
    assert body["userId"] == "ops.li"
    assert body["status"] == "RUNNING"
    assert body["answer"] is body["selfEvaluation"] is body["feedback"] is body["caseId"] is None
    assert DiagnosisSession.objects.get(session_id="s-1").status == "RUNNING"


def test_a_session_without_an_id_gets_a_uuid(api) -> None:
    response = api.post("/api/sessions", {"query": "disk full on node-7"}, format="json")

    assert response.status_code == 201
    generated = response.json()["sessionId"]
    assert str(uuid.UUID(generated)) == generated
    assert DiagnosisSession.objects.filter(session_id=generated).exists()


def test_reposting_an_existing_session_id_is_a_conflict_and_changes_nothing(api) -> None:
    api.post("/api/sessions", {"sessionId": "dup", "query": "first"}, format="json")

    response = api.post("/api/sessions", {"sessionId": "dup", "query": "second"}, format="json")

    assert response.status_code == 409
    assert response.json() == {"success": False, "message": '会话 "dup" 已存在', "code": "conflict"}
    assert list(DiagnosisSession.objects.values_list("query", flat=True)) == ["first"]


def test_session_ids_differing_only_in_case_are_two_sessions(api) -> None:
    assert (
        api.post("/api/sessions", {"sessionId": "AbC", "query": "q"}, format="json").status_code
        == 201
    )
    assert (
        api.post("/api/sessions", {"sessionId": "abc", "query": "q"}, format="json").status_code
        == 201
    )
    assert DiagnosisSession.objects.count() == 2


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": 42}, "query"),
        ({"query": None}, "query"),
        ({"query": "q", "sessionId": ""}, "sessionId"),
        ({"query": "q", "sessionId": "has space"}, "sessionId"),
        ({"query": "q", "sessionId": "a/b"}, "sessionId"),
        ({"query": "q", "sessionId": "x" * 65}, "sessionId"),
        ({"query": "q", "sessionId": 7}, "sessionId"),
        ({"query": "q", "userId": "u" * 65}, "userId"),
        ({"query": "q", "user_id": "ops"}, "user_id"),
        ({"query": "q\u0000"}, "query"),
    ],
)
def test_invalid_fields_are_400_naming_the_field_and_nothing_is_written(api, body, field) -> None:
    response = api.post("/api/sessions", body, format="json")

    assert response.status_code == 400
    payload = response.json()
    assert payload["code"] == "invalid"
    assert field in payload["errors"]
    assert not DiagnosisSession.objects.exists()


@pytest.mark.parametrize("raw", ["[]", '"text"', "null", "12", "{", "{'a': 1}", "NaN"])
def test_a_body_that_is_not_a_json_object_is_400(api, raw) -> None:
    response = api.post("/api/sessions", raw, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["code"] in {"invalid", "parse_error"}
    assert not DiagnosisSession.objects.exists()


def test_a_body_that_is_not_json_at_all_is_415(api) -> None:
    response = api.post(
        "/api/sessions", "query=x", content_type="application/x-www-form-urlencoded"
    )

    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
