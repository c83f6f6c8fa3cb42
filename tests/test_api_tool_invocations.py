"""POST /api/sessions/{sessionId}/tool-invocations: facts, stored once, all or nothing."""

import pytest
from django.db import connection

from diagnosis.models import ToolInvocation
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/sessions/{}/tool-invocations"


def call(**overrides):  # type: ignore[no-untyped-def]
    return {
        "toolName": "QueryInternalDocsTools",
        "status": "SUCCESS",
        "matchLevel": "L0",
        "hitCount": 3,
        "query": "connection pool exhausted",
        **overrides,
    }


@pytest.fixture
def running():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="run-1")


def test_one_invocation_is_stored_with_every_field(api, running) -> None:
    response = api.post(
        URL.format("run-1"),
        call(invocationId="i-1", durationMs=87, errorMessage=None, kind="retrieval"),
        format="json",
    )

    assert response.status_code == 201
    assert response.json() == {"sessionId": "run-1", "received": 1, "created": 1, "duplicates": 0}
    stored = ToolInvocation.objects.get()
    assert (
        stored.session_id,
        stored.invocation_id,
        stored.tool_name,
        stored.kind,
        stored.status,
        stored.match_level,
        stored.hit_count,
        stored.query,
        stored.duration_ms,
    ) == (
        "run-1",
        "i-1",
        "QueryInternalDocsTools",
        "retrieval",
        "SUCCESS",
        "L0",
        3,
        "connection pool exhausted",
        87,
    )


def test_defaults_are_a_retrieval_call_with_no_hits(api, running) -> None:
    api.post(
        URL.format("run-1"), {"toolName": "SearchRunbookTools", "status": "FAILED"}, format="json"
    )

    stored = ToolInvocation.objects.get()
    assert (stored.kind, stored.hit_count, stored.match_level, stored.invocation_id) == (
        "retrieval",
        0,
        None,
        None,
    )


def test_a_list_is_stored_and_counted(api, running) -> None:
    body = [call(invocationId=f"i-{n}") for n in range(3)]

    response = api.post(URL.format("run-1"), body, format="json")

    assert response.status_code == 201
    assert response.json()["created"] == 3
    assert ToolInvocation.objects.count() == 3


def test_a_retried_invocation_id_is_not_stored_twice(api, running) -> None:
    api.post(URL.format("run-1"), call(invocationId="i-1"), format="json")

    response = api.post(URL.format("run-1"), call(invocationId="i-1"), format="json")

    assert response.status_code == 200
    assert response.json() == {"sessionId": "run-1", "received": 1, "created": 0, "duplicates": 1}
    assert ToolInvocation.objects.count() == 1


def test_a_partly_retried_batch_stores_only_the_new_invocations(api, running) -> None:
    api.post(URL.format("run-1"), [call(invocationId="a"), call(invocationId="b")], format="json")

    response = api.post(
        URL.format("run-1"),
        [call(invocationId="b"), call(invocationId="c"), call(invocationId="c"), call()],
        format="json",
    )

    assert response.json() == {"sessionId": "run-1", "received": 4, "created": 2, "duplicates": 2}
    stored = ToolInvocation.objects.values_list("invocation_id", flat=True)
    assert sorted(stored, key=lambda key: key or "") == [None, "a", "b", "c"]


def test_the_same_invocation_id_in_two_sessions_is_two_facts(api, running) -> None:
    DiagnosisSessionFactory(session_id="run-2")
    api.post(URL.format("run-1"), call(invocationId="x"), format="json")
    api.post(URL.format("run-2"), call(invocationId="x"), format="json")

    assert ToolInvocation.objects.count() == 2


def test_a_list_with_one_bad_item_stores_nothing_and_names_the_item(api, running) -> None:
    body = [call(), call(), call(status="MAYBE")]

    response = api.post(URL.format("run-1"), body, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "success": False,
        "message": "请求参数无效",
        "code": "invalid",
        "errors": {"2.status": ['Unknown value "MAYBE". Allowed values: SUCCESS, FAILED.']},
    }
    assert not ToolInvocation.objects.exists()


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"status": "ok"}, "status", 'Unknown value "ok". Allowed values: SUCCESS, FAILED.'),
        ({"kind": "tool"}, "kind", 'Unknown value "tool". Allowed values: retrieval, other.'),
        ({"matchLevel": "L2"}, "matchLevel", 'Unknown value "L2". Allowed values: L0, L1, NONE.'),
        (
            {"status": "FAILED", "matchLevel": "L0"},
            "matchLevel",
            "A failed call has no match level: leave matchLevel out or null.",
        ),
        (
            {"kind": "other", "matchLevel": "L1"},
            "matchLevel",
            "Only retrieval calls have a match level: leave matchLevel out or null.",
        ),
        ({"hitCount": -1}, "hitCount", "Ensure this value is greater than or equal to 0."),
        ({"durationMs": -5}, "durationMs", "Ensure this value is greater than or equal to 0."),
        ({"hitCount": 2**31}, "hitCount", "Ensure this value is less than or equal to 2147483647."),
        ({"hitCount": "3"}, "hitCount", "Must be an integer."),
        ({"hitCount": 2.5}, "hitCount", "Must be an integer."),
        ({"hitCount": True}, "hitCount", "Must be an integer."),
        ({"toolName": "t" * 129}, "toolName", "Ensure this field has no more than 128 characters."),
        (
            {"invocationId": "i" * 65},
            "invocationId",
            "Ensure this field has no more than 64 characters.",
        ),
        ({"toolName": None}, "toolName", "This field may not be null."),
        ({"match_level": "L0"}, "match_level", "Unknown field."),
    ],
)
def test_invalid_invocations_are_400_with_the_field_and_allowed_values(
    api, running, overrides, field, message
) -> None:
    response = api.post(URL.format("run-1"), call(**overrides), format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == {field: [message]}
    assert not ToolInvocation.objects.exists()


def test_more_than_500_invocations_in_one_request_is_400(api, running) -> None:
    response = api.post(URL.format("run-1"), [call()] * 501, format="json")

    assert response.status_code == 400
    assert response.json()["errors"] == {"body": ["At most 500 tool invocations."]}
    assert not ToolInvocation.objects.exists()


@pytest.mark.parametrize("body", [[], ["text"], [[call()]], "text", 5])
def test_bodies_that_are_not_invocation_objects_are_400(api, running, body) -> None:
    response = api.post(URL.format("run-1"), body, format="json")

    assert response.status_code == 400
    assert not ToolInvocation.objects.exists()


def test_an_unknown_session_is_404(api) -> None:
    response = api.post(URL.format("nope"), call(), format="json")

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": '会话 "nope" 不存在',
        "code": "not_found",
    }


def test_an_invalid_session_id_in_the_path_is_400(api) -> None:
    response = api.post(URL.format("bad%20id"), call(), format="json")

    assert response.status_code == 400
    assert "sessionId" in response.json()["errors"]


@pytest.mark.parametrize("status", ["SUCCESS", "FAILED"])
def test_recording_on_a_finished_session_is_409_and_stores_nothing(api, status) -> None:
    DiagnosisSessionFactory(session_id="done", status=status, answer="a")

    response = api.post(URL.format("done"), call(), format="json")

    assert response.status_code == 409
    assert response.json() == {
        "success": False,
        "message": f'会话 "done" 已是 {status} 状态，不能再记录工具调用',
        "code": "conflict",
    }
    assert not ToolInvocation.objects.exists()


def test_a_batch_of_100_is_one_insert(api, running, django_assert_max_num_queries) -> None:
    body = [call(invocationId=f"i-{n}") for n in range(100)]

    # key lookup, savepoint, session lock, existing-id check, INSERT, release
    with django_assert_max_num_queries(7) as captured:
        response = api.post(URL.format("run-1"), body, format="json")

    assert response.status_code == 201
    inserts = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("INSERT")]
    # One multi-row INSERT on MySQL; SQLite's 999-parameter limit splits it in two.
    assert len(inserts) == (1 if connection.vendor == "mysql" else 2)
    assert ToolInvocation.objects.count() == 100
