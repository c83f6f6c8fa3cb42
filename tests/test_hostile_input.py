"""Hostile and broken input: each gets a clear 4xx and writes nothing; odd-but-valid text
(4-byte emoji, SQL-looking strings) is stored and returned exactly."""

import json

import pytest
from django.db import connection

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession, ToolInvocation
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "/api/sessions",
    "/api/sessions/h-1/tool-invocations",
    "/api/sessions/h-1/complete",
    "/api/feedback",
]


@pytest.fixture(autouse=True)
def running():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="h-1")


def nothing_written() -> bool:
    session = DiagnosisSession.objects.get()
    return (
        DiagnosisSession.objects.count() == 1
        and session.status == "RUNNING"
        and session.feedback is None
        and not ToolInvocation.objects.exists()
        and not CaseLibrary.objects.exists()
    )


def raw_post(api, url: str, body: bytes, content_type: str = "application/json"):  # type: ignore[no-untyped-def]
    return api.generic("POST", url, body, content_type=content_type)


def assert_json_4xx(response, status: int) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body.get("message")
    assert "Traceback" not in response.content.decode()


@pytest.mark.parametrize("url", ENDPOINTS)
@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"{",
        b'{"a": 1,}',
        b"\xff\xfe\xfa",
        b'{"query": "\xc3\x28"}',
        b"NaN",
        b'{"query": Infinity}',
    ],
    ids=[
        "empty",
        "text",
        "truncated",
        "trailing-comma",
        "invalid-utf8",
        "invalid-utf8-in-string",
        "nan",
        "infinity",
    ],
)
def test_bodies_that_are_not_json_are_400(api, url, body) -> None:
    response = raw_post(api, url, body)

    assert_json_4xx(response, 400)
    assert nothing_written()


@pytest.mark.parametrize("url", ENDPOINTS)
@pytest.mark.parametrize("body", ["[]", "3", '"text"', "true", "null", "[[[]]]"])
def test_json_of_the_wrong_type_is_400(api, url, body) -> None:
    response = raw_post(api, url, body.encode())

    assert_json_4xx(response, 400)
    assert nothing_written()


@pytest.mark.parametrize("url", ENDPOINTS)
def test_a_number_of_thousands_of_digits_is_400_saying_so_in_the_api_s_words(api, url) -> None:
    body = b'{"query": "q", "limit": ' + b"9" * 5000 + b"}"

    response = raw_post(api, url, body)

    assert_json_4xx(response, 400)
    message = response.json()["message"]
    # The feedback contract words every unreadable body its own way.
    assert message == (
        "请求体不是合法的 JSON" if url == "/api/feedback" else "请求体中的数字过长（5000 位）"
    )
    assert nothing_written()


@pytest.mark.parametrize("url", ENDPOINTS)
def test_deep_nesting_is_400_not_a_crash(api, url) -> None:
    depth = 200_000
    body = ("[" * depth + "]" * depth).encode()

    response = raw_post(api, url, body)

    assert_json_4xx(response, 400)
    assert nothing_written()


@pytest.mark.parametrize("url", ENDPOINTS)
def test_a_body_over_the_size_limit_is_413(api, url, settings) -> None:
    body = json.dumps({"query": "x" * (settings.API_MAX_BODY_BYTES + 1)}).encode()

    response = raw_post(api, url, body)

    assert_json_4xx(response, 413)
    assert nothing_written()


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/sessions", {"query": "nul \u0000 byte"}),
        ("/api/sessions", {"query": "lone \ud800 surrogate"}),
        ("/api/sessions", {"query": "q", "userId": "\u0000"}),
        ("/api/sessions/h-1/tool-invocations", {"toolName": "a\u0000b", "status": "SUCCESS"}),
        (
            "/api/sessions/h-1/tool-invocations",
            {"toolName": "t", "status": "SUCCESS", "query": "\udfff"},
        ),
        ("/api/sessions/h-1/complete", {"status": "SUCCESS", "answer": "x\u0000"}),
        ("/api/feedback", {"sessionId": "h-1\u0000", "feedback": "useful"}),
    ],
)
def test_nul_bytes_and_unpaired_surrogates_are_400(api, url, body) -> None:
    raw = json.dumps(body).encode()  # \u0000 and \ud800 escapes, as a client would send

    response = raw_post(api, url, raw)

    assert_json_4xx(response, 400)
    assert nothing_written()


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/sessions", {"query": "q", "sessionId": "s" * 65}),
        ("/api/sessions", {"query": "q", "userId": "u" * 65}),
        ("/api/sessions/h-1/tool-invocations", {"toolName": "t" * 129, "status": "SUCCESS"}),
        (
            "/api/sessions/h-1/tool-invocations",
            {"toolName": "t", "status": "SUCCESS", "invocationId": "i" * 65},
        ),
        (
            "/api/sessions/h-1/tool-invocations",
            {"toolName": "t", "status": "SUCCESS", "hitCount": 10**12},
        ),
        (
            "/api/sessions/h-1/tool-invocations",
            {"toolName": "t", "status": "SUCCESS", "durationMs": -1},
        ),
        ("/api/feedback", {"sessionId": "s" * 65, "feedback": "useful"}),
    ],
)
def test_over_long_or_out_of_range_fields_are_400(api, url, body) -> None:
    response = raw_post(api, url, json.dumps(body).encode())

    assert_json_4xx(response, 400)
    assert nothing_written()


EMOJI_QUERY = "数据库又挂了 🔥😱 order-service 𠮷 p99 飙到 3s 👀"
EMOJI_ANSWER = "根因 🧯：连接池耗尽\n1. 扩容 🚀\n2. 加熔断 ✅ 𩸽"


def test_four_byte_characters_are_stored_and_returned_intact(api) -> None:
    api.post(
        "/api/sessions",
        {"sessionId": "emoji", "query": EMOJI_QUERY, "userId": "运维🐱"},
        format="json",
    )
    api.post(
        "/api/sessions/emoji/tool-invocations",
        {
            "toolName": "QueryInternalDocsTools",
            "status": "SUCCESS",
            "matchLevel": "L0",
            "query": "🔍 连接池",
        },
        format="json",
    )
    api.post(
        "/api/sessions/emoji/complete", {"status": "SUCCESS", "answer": EMOJI_ANSWER}, format="json"
    )
    case_id = api.post(
        "/api/feedback", {"sessionId": "emoji", "feedback": "useful"}, format="json"
    ).json()["caseId"]

    body = api.get("/api/sessions/emoji").json()
    assert (body["query"], body["answer"], body["userId"]) == (EMOJI_QUERY, EMOJI_ANSWER, "运维🐱")
    assert body["toolInvocations"][0]["query"] == "🔍 连接池"
    case = api.get(f"/api/cases/{case_id}").json()
    assert (case["title"], case["solution"]) == (EMOJI_QUERY[:100], EMOJI_ANSWER)
    with connection.cursor() as cursor:  # and in the table itself, not only through the ORM
        cursor.execute("SELECT query FROM diagnosis_session WHERE session_id = %s", ["emoji"])
        assert cursor.fetchone()[0] == EMOJI_QUERY


SQL_LIKE = [
    "'; DROP TABLE diagnosis_session; --",
    '" OR 1=1 --',
    "Robert'); DELETE FROM case_library WHERE ('1'='1",
    "%_\\%",
]


@pytest.mark.parametrize("text", SQL_LIKE)
def test_sql_looking_text_is_just_text(api, text) -> None:
    response = api.post(
        "/api/sessions", {"sessionId": "sql", "query": text, "userId": text[:64]}, format="json"
    )
    api.post("/api/sessions/sql/complete", {"status": "SUCCESS", "answer": text}, format="json")
    api.post("/api/feedback", {"sessionId": "sql", "feedback": "useful"}, format="json")

    assert response.status_code == 201
    body = api.get("/api/sessions/sql").json()
    assert (body["query"], body["answer"], body["userId"]) == (text, text, text[:64])
    assert DiagnosisSession.objects.count() == 2
    assert CaseLibrary.objects.get().root_cause == text


@pytest.mark.parametrize(
    "path",
    [
        "/api/sessions/%27%20OR%201%3D1",
        "/api/sessions/..%2F..%2Fetc",
        "/api/sessions/" + "x" * 300,
        "/api/sessions/%F0%9F%94%A5",
        "/api/cases/%27%3B--",
    ],
)
def test_hostile_ids_in_the_path_are_4xx(api, path) -> None:
    response = api.get(path)

    assert response.status_code in (400, 404)
    assert response["Content-Type"].startswith("application/json")
