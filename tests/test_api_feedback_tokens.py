"""POST /api/feedback from a browser: signed feedback tokens, reasons, comments,
corrections, their refusals and their rate limits."""

import time

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from diagnosis.feedback_tokens import feedback_token_for
from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/feedback"


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    cache.clear()


@pytest.fixture
def finished():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(session_id="tok-1", succeeded=True)


def browser(token: str, **extra: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Feedback {token}", **extra)
    return client


def refused(message: str) -> dict:
    return {"success": False, "message": message, "caseId": None}


def nothing_written(session_id: str = "tok-1") -> bool:
    session = DiagnosisSession.objects.get(session_id=session_id)
    return session.feedback is None and not FeedbackEntry.objects.exists()


def test_completing_a_session_hands_out_a_feedback_token(make_client) -> None:
    agent = make_client("agent")
    agent.post("/api/sessions", {"sessionId": "tok-9", "query": "磁盘满了"}, format="json")

    completed = agent.post(
        "/api/sessions/tok-9/complete", {"status": "SUCCESS", "answer": "清理日志"}, format="json"
    ).json()
    read = agent.get("/api/sessions/tok-9").json()

    assert completed["feedbackToken"] and read["feedbackToken"]
    response = browser(completed["feedbackToken"]).post(
        URL, {"sessionId": "tok-9", "feedback": "useful"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["message"] == "反馈已记录"


def test_a_reader_with_a_token_rates_not_useful_with_a_reason_and_a_correction(finished) -> None:
    token = feedback_token_for(session_id="tok-1")

    response = browser(token).post(
        URL,
        {
            "sessionId": "tok-1",
            "feedback": "not_useful",
            "reason": "wrong_root_cause",
            "comment": "根因不对",
            "correction": "磁盘 inode 耗尽，不是容量满",
        },
        format="json",
    )

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "反馈已记录", "caseId": None}
    assert DiagnosisSession.objects.get().feedback == "not_useful"
    entry = FeedbackEntry.objects.get()
    assert (entry.feedback, entry.reason, entry.comment, entry.correction, entry.channel) == (
        "not_useful",
        "wrong_root_cause",
        "根因不对",
        "磁盘 inode 耗尽，不是容量满",
        "token",
    )


def test_a_token_for_another_session_is_refused_and_writes_nothing(finished) -> None:
    DiagnosisSessionFactory(session_id="tok-2", succeeded=True)
    token = feedback_token_for(session_id="tok-2")

    response = browser(token).post(
        URL, {"sessionId": "tok-1", "feedback": "not_useful", "reason": "other"}, format="json"
    )

    assert response.status_code == 403
    assert response.json() == refused("该反馈令牌不属于此会话")
    assert nothing_written()


@pytest.mark.parametrize(
    "forge",
    [
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),
        lambda t: t.replace(t.split(":")[0], "InRvay0yIg"),  # "tok-2", signature kept
        lambda t: "not-a-token",
        lambda t: "",
    ],
    ids=["signature changed", "session swapped", "garbage", "empty"],
)
def test_a_tampered_token_is_403_in_the_contract_shape(finished, forge) -> None:
    token = forge(feedback_token_for(session_id="tok-1"))

    response = browser(token).post(URL, {"sessionId": "tok-1", "feedback": "useful"}, format="json")

    assert response.status_code == 403
    assert response.json() == refused("反馈令牌无效")
    assert nothing_written()


def test_a_token_signed_with_another_secret_is_refused(finished, settings) -> None:
    settings.SECRET_KEY = "another-installation-secret-key-0123456789"
    token = feedback_token_for(session_id="tok-1")
    settings.SECRET_KEY = "test-only-secret-key-not-for-production-0123456789abcdef"

    response = browser(token).post(URL, {"sessionId": "tok-1", "feedback": "useful"}, format="json")

    assert response.status_code == 403


def test_an_expired_token_is_403_and_says_so(finished, settings, monkeypatch) -> None:
    settings.FEEDBACK_TOKEN_MAX_AGE = 3600
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() - 3601)
    token = feedback_token_for(session_id="tok-1")
    monkeypatch.undo()

    response = browser(token).post(URL, {"sessionId": "tok-1", "feedback": "useful"}, format="json")

    assert response.status_code == 403
    assert response.json() == refused("反馈令牌已过期，请刷新页面后重试")
    assert nothing_written()


def test_a_token_still_within_its_max_age_works(finished, settings, monkeypatch) -> None:
    settings.FEEDBACK_TOKEN_MAX_AGE = 3600
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() - 3500)
    token = feedback_token_for(session_id="tok-1")
    monkeypatch.undo()

    response = browser(token).post(URL, {"sessionId": "tok-1", "feedback": "useful"}, format="json")

    assert response.status_code == 200


def test_a_token_and_an_api_key_together_are_400(finished, api) -> None:
    token = feedback_token_for(session_id="tok-1")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Feedback {token}, Api-Key {api.raw_key}")

    response = client.post(URL, {"sessionId": "tok-1", "feedback": "useful"}, format="json")

    assert response.status_code == 400
    assert response.json() == refused(
        "只能使用一种凭据：Authorization: Feedback <token> 或 Api-Key <key>"
    )
    assert nothing_written()


@pytest.mark.parametrize("key", ["token", "feedbackToken"])
def test_a_token_in_the_body_is_400(finished, api, key) -> None:
    token = feedback_token_for(session_id="tok-1")

    response = APIClient().post(
        URL, {"sessionId": "tok-1", "feedback": "useful", key: token}, format="json"
    )
    with_key = api.post(
        URL, {"sessionId": "tok-1", "feedback": "useful", key: token}, format="json"
    )

    assert (response.status_code, with_key.status_code) == (400, 400)
    assert with_key.json() == refused("反馈令牌只能放在请求头中：Authorization: Feedback <token>")
    assert nothing_written()


def test_a_token_opens_no_other_endpoint(finished) -> None:
    token = feedback_token_for(session_id="tok-1")

    assert browser(token).get("/api/sessions/tok-1").status_code == 401
    assert browser(token).get("/api/cases").status_code == 401


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"reason": "bad_vibes"}, "reason 取值无效，允许的值：wrong_root_cause, "),
        ({"reason": 3}, "reason 取值无效"),
        ({"comment": "长" * 2001}, "comment 不能超过 2000 个字符"),
        ({"comment": 12}, "comment 必须是字符串"),
        ({"correction": ["a"]}, "correction 必须是字符串"),
    ],
)
def test_bad_details_are_400_and_write_nothing(finished, api, extra, message) -> None:
    response = api.post(
        URL, {"sessionId": "tok-1", "feedback": "not_useful", **extra}, format="json"
    )

    assert response.status_code == 400
    body = response.json()
    assert body["message"].startswith(message)
    assert (body["success"], body["caseId"]) == (False, None)
    assert nothing_written()


def test_a_comment_with_a_lone_surrogate_is_400_saying_so(finished, api) -> None:
    # Valid JSON (an escape), but no text: a surrogate code point with no partner.
    body = b'{"sessionId": "tok-1", "feedback": "not_useful", "comment": "a\\ud800b"}'

    response = api.generic("POST", URL, body, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["message"].startswith("comment 含有无效的 Unicode 字符")
    assert nothing_written()


def test_a_comment_of_exactly_2000_characters_is_kept(finished, api) -> None:
    response = api.post(
        URL,
        {"sessionId": "tok-1", "feedback": "not_useful", "comment": "长" * 2000, "reason": None},
        format="json",
    )

    assert response.status_code == 200
    entry = FeedbackEntry.objects.get()
    assert (len(entry.comment), entry.reason, entry.channel) == (2000, "", "api_key")


def test_plain_feedback_writes_no_history_row(finished, api) -> None:
    api.post(URL, {"sessionId": "tok-1", "feedback": "not_useful"}, format="json")

    assert not FeedbackEntry.objects.exists()


def test_the_last_write_wins_and_earlier_words_stay_as_history(finished) -> None:
    token = feedback_token_for(session_id="tok-1")
    client = browser(token)

    client.post(
        URL,
        {"sessionId": "tok-1", "feedback": "not_useful", "reason": "outdated", "comment": "旧"},
        format="json",
    )
    client.post(
        URL, {"sessionId": "tok-1", "feedback": "useful", "comment": "重新看是对的"}, format="json"
    )

    assert DiagnosisSession.objects.get().feedback == "useful"
    assert list(FeedbackEntry.objects.order_by("id").values_list("feedback", "comment")) == [
        ("not_useful", "旧"),
        ("useful", "重新看是对的"),
    ]


def test_feedback_with_details_on_a_running_session_writes_nothing(api) -> None:
    DiagnosisSessionFactory(session_id="tok-1")

    response = api.post(
        URL, {"sessionId": "tok-1", "feedback": "not_useful", "comment": "x"}, format="json"
    )

    assert response.status_code == 409
    assert nothing_written()


def test_a_token_is_rate_limited_on_its_own(finished, settings) -> None:
    settings.FEEDBACK_TOKEN_RATE_LIMIT = "3/min"
    client = browser(feedback_token_for(session_id="tok-1"))

    codes = [
        client.post(URL, {"sessionId": "tok-1", "feedback": "useful"}, format="json").status_code
        for _ in range(4)
    ]
    other = browser(feedback_token_for(session_id="tok-2"))
    DiagnosisSessionFactory(session_id="tok-2", succeeded=True)

    assert codes == [200, 200, 200, 429]
    response = other.post(URL, {"sessionId": "tok-2", "feedback": "useful"}, format="json")
    assert response.status_code == 200


def test_token_requests_from_one_address_are_rate_limited(settings) -> None:
    settings.FEEDBACK_ADDRESS_RATE_LIMIT = "2/min"
    codes = []
    for n in range(3):
        DiagnosisSessionFactory(session_id=f"addr-{n}", succeeded=True)
        client = browser(feedback_token_for(session_id=f"addr-{n}"), REMOTE_ADDR="10.1.2.3")
        body = {"sessionId": f"addr-{n}", "feedback": "not_useful"}
        codes.append(client.post(URL, body, format="json").status_code)
    DiagnosisSessionFactory(session_id="addr-x", succeeded=True)
    elsewhere = browser(feedback_token_for(session_id="addr-x"), REMOTE_ADDR="10.9.9.9")

    assert codes == [200, 200, 429]
    assert elsewhere.post(URL, {"sessionId": "addr-x", "feedback": "useful"}, format="json").json()[
        "success"
    ]
    assert response_is_json_429(client)


def response_is_json_429(client: APIClient) -> bool:
    response = client.post(URL, {"sessionId": "addr-2", "feedback": "useful"}, format="json")
    return response.status_code == 429 and response.json() == refused("请求过于频繁，请稍后再试")
