"""POST /api/feedback: every row of the contract, with the database state after each call."""

import pytest

from caselibrary.models import CaseLibrary
from caselibrary.services.cases import case_create_manual, cases_delete
from caselibrary.services.proposals import cases_structure_new
from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

INVALID_ID = "sessionId 只能包含 A-Z a-z 0-9 . _ : -"

URL = "/api/feedback"
QUERY = "生产环境 order-service 从 14:05 开始大量 504，网关日志显示 upstream timeout，" * 3
ANSWER = "根因：payment-gateway 连接池耗尽。\n1. 扩容连接池到 200\n2. 给下游调用加熔断"


@pytest.fixture
def finished():  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(
        session_id="fb-1", status="SUCCESS", query=QUERY, answer=ANSWER, user_id="ops.li"
    )


def state(session_id: str = "fb-1") -> tuple:
    session = DiagnosisSession.objects.get(session_id=session_id)
    cases = list(
        CaseLibrary.objects.filter(diagnosis_id=session_id).values_list("case_id", flat=True)
    )
    return session.status, session.feedback, session.feedback_at, session.updated_at, cases


def post(client, body, **kwargs):  # type: ignore[no-untyped-def]
    return client.post(URL, body, format="json", **kwargs)


def test_useful_records_feedback_and_creates_the_case(api, finished) -> None:
    response = post(api, {"sessionId": "fb-1", "feedback": "useful"})

    assert response.status_code == 200
    case = CaseLibrary.objects.get()
    assert response.json() == {"success": True, "message": "反馈已记录", "caseId": case.case_id}
    assert list(response.json()) == ["success", "message", "caseId"]
    session = DiagnosisSession.objects.get()
    assert (session.status, session.feedback) == ("SUCCESS", "useful")
    assert session.feedback_at is not None
    # Made GENERAL; the worker's structuring pass fills it in next.
    assert (
        case.diagnosis_id,
        case.source_type,
        case.fault_category,
        case.title,
        case.root_cause,
        case.solution,
        case.created_by,
        case.updated_by,
        case.error_code,
    ) == ("fb-1", "AUTO", "GENERAL", QUERY[:100], ANSWER, ANSWER, "system", "system", None)
    assert len(case.case_id) == 36 and case.case_id.count("-") == 4

    assert cases_structure_new() == 1

    # The category from the taxonomy's keywords (upstream, 下游, 熔断: DEPENDENCY), the
    # error code the first the question gives ("504，网关日志": an HTTP status).
    case.refresh_from_db()
    assert (case.fault_category, case.error_code, case.updated_by) == (
        "DEPENDENCY",
        "HTTP 504",
        "system",
    )


@pytest.mark.parametrize(
    "query",
    ["短问题", "x" * 99 + "🔥" + "y" * 10, "磁盘" * 60 + "🙂", "a" * 100, "\u3000lead" + "z" * 120],
)
def test_the_case_title_is_the_first_100_characters_of_the_question(api, query) -> None:
    DiagnosisSessionFactory(session_id="fb-1", status="SUCCESS", query=query, answer="  答案 🚀\n")

    case_id = post(api, {"sessionId": "fb-1", "feedback": "useful"}).json()["caseId"]

    case = CaseLibrary.objects.get(case_id=case_id)
    assert (case.title, case.root_cause, case.solution) == (
        query[:100],
        "  答案 🚀\n",
        "  答案 🚀\n",
    )


def test_useful_on_a_session_with_a_case_made_by_hand_returns_that_case(api, finished) -> None:
    manual = case_create_manual(
        created_by="ops.wang", title="手工案例", root_cause="r", solution="s", diagnosis_id="fb-1"
    )

    response = post(api, {"sessionId": "fb-1", "feedback": "useful"})

    assert response.json()["caseId"] == manual.case_id
    assert CaseLibrary.objects.get().source_type == "MANUAL"
    assert state()[1] == "useful"


def test_useful_twice_returns_the_same_case_and_inserts_nothing(api, finished) -> None:
    first = post(api, {"sessionId": "fb-1", "feedback": "useful"}).json()
    before = state()

    second = post(api, {"sessionId": "fb-1", "feedback": "useful"})

    assert second.status_code == 200
    assert second.json() == first
    assert state() == before  # not even feedback_at moves
    assert CaseLibrary.objects.count() == 1


def test_repeating_useful_after_an_operator_deleted_the_case_brings_no_case_back(
    api, finished
) -> None:
    post(api, {"sessionId": "fb-1", "feedback": "useful"})
    cases_delete(case_ids=[CaseLibrary.objects.get().case_id])
    before = state()

    again = post(api, {"sessionId": "fb-1", "feedback": "useful"})

    assert again.status_code == 200
    assert again.json() == {"success": True, "message": "反馈已记录", "caseId": None}
    assert not CaseLibrary.objects.exists()
    assert state() == before


def test_not_useful_marks_a_bad_case_and_leaves_status_alone(api, finished) -> None:
    response = post(api, {"sessionId": "fb-1", "feedback": "not_useful"})

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "反馈已记录", "caseId": None}
    status, feedback, feedback_at, _, cases = state()
    assert (status, feedback, cases) == ("SUCCESS", "not_useful", [])
    assert feedback_at is not None


def test_not_useful_on_a_failed_session_is_recorded(api) -> None:
    DiagnosisSessionFactory(session_id="fb-1", status="FAILED")

    response = post(api, {"sessionId": "fb-1", "feedback": "not_useful"})

    assert response.status_code == 200
    assert state()[:2] == ("FAILED", "not_useful")


def test_changing_feedback_last_write_wins_and_a_case_once_made_stays(api, finished) -> None:
    case_id = post(api, {"sessionId": "fb-1", "feedback": "useful"}).json()["caseId"]
    useful_at = state()[2]

    flipped = post(api, {"sessionId": "fb-1", "feedback": "not_useful"})

    assert flipped.json() == {"success": True, "message": "反馈已记录", "caseId": None}
    status, feedback, feedback_at, _, cases = state()
    assert (status, feedback, cases) == ("SUCCESS", "not_useful", [case_id])
    assert feedback_at > useful_at

    back = post(api, {"sessionId": "fb-1", "feedback": "useful"})
    assert back.json()["caseId"] == case_id
    assert CaseLibrary.objects.count() == 1


def test_not_useful_then_useful_creates_the_case_then(api, finished) -> None:
    post(api, {"sessionId": "fb-1", "feedback": "not_useful"})
    assert CaseLibrary.objects.count() == 0

    response = post(api, {"sessionId": "fb-1", "feedback": "useful"})

    assert response.json()["caseId"] == CaseLibrary.objects.get().case_id
    assert state()[1] == "useful"


BAD_FEEDBACK = "feedback 取值无效，允许的值：useful, not_useful"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"sessionId": "fb-1"}, "缺少 feedback"),
        ({"sessionId": "fb-1", "feedback": "Useful"}, BAD_FEEDBACK),
        ({"sessionId": "fb-1", "feedback": " useful"}, BAD_FEEDBACK),
        ({"sessionId": "fb-1", "feedback": "useful "}, BAD_FEEDBACK),
        ({"sessionId": "fb-1", "feedback": None}, "缺少 feedback"),
        ({"sessionId": "fb-1", "feedback": 1}, BAD_FEEDBACK),
        ({"sessionId": "fb-1", "feedback": True}, BAD_FEEDBACK),
        ({"sessionId": "fb-1", "feedback": ["useful"]}, BAD_FEEDBACK),
        ({"sessionId": "fb-1", "feedback": "BAD_CASE"}, BAD_FEEDBACK),
        ({"feedback": "useful"}, "缺少 sessionId"),
        ({"sessionId": None, "feedback": "useful"}, "缺少 sessionId"),
        ({"sessionId": "", "feedback": "useful"}, "sessionId 不能为空"),
        ({"sessionId": "   ", "feedback": "useful"}, "sessionId 不能为空"),
        ({"sessionId": "x" * 65, "feedback": "useful"}, "sessionId 不能超过 64 个字符"),
        ({"sessionId": 42, "feedback": "useful"}, "sessionId 必须是字符串"),
        ({"sessionId": "fb 1", "feedback": "useful"}, INVALID_ID),
        ({"sessionId": "fb-1';--", "feedback": "useful"}, INVALID_ID),
        ({"sessionId": "fb-1\x00", "feedback": "useful"}, INVALID_ID),
        # A reason says what was wrong: it goes with not_useful only.
        (
            {"sessionId": "fb-1", "feedback": "useful", "reason": "other"},
            "reason 只能与 feedback=not_useful 一起提交",
        ),
        # One problem, one message: the first in the order sessionId, feedback, reason...
        ({"sessionId": 42, "feedback": "Useful", "reason": 1}, "sessionId 必须是字符串"),
    ],
)
def test_invalid_bodies_are_400_in_the_contract_shape_and_write_nothing(
    api, finished, body, message
) -> None:
    before = state()

    response = post(api, body)

    assert response.status_code == 400
    assert response.json() == {"success": False, "message": message, "caseId": None}
    assert state() == before


@pytest.mark.parametrize(
    ("raw", "content_type", "message"),
    [
        ("[]", "application/json", "请求体必须是 JSON 对象"),
        ('"useful"', "application/json", "请求体必须是 JSON 对象"),
        ("null", "application/json", "请求体必须是 JSON 对象"),
        ("", "application/json", "请求体必须是 JSON 对象"),
        ("{not json", "application/json", "请求体不是合法的 JSON"),
        (b"\xff\xfe{}", "application/json", "请求体不是合法的 JSON"),
        (
            "sessionId=fb-1&feedback=useful",
            "application/x-www-form-urlencoded",
            "Content-Type 必须是 application/json",
        ),
        (
            '{"sessionId": "fb-1", "feedback": "useful"}',
            "text/plain",
            "Content-Type 必须是 application/json",
        ),
    ],
)
def test_bodies_that_are_not_a_json_object_are_400(
    api, finished, raw, content_type, message
) -> None:
    before = state()

    response = api.post(URL, raw, content_type=content_type)

    assert response.status_code == 400
    assert response.json() == {"success": False, "message": message, "caseId": None}
    assert state() == before


def test_an_unknown_session_is_404(api) -> None:
    response = post(api, {"sessionId": "ghost", "feedback": "useful"})

    assert response.status_code == 404
    assert response.json() == {"success": False, "message": "会话不存在", "caseId": None}
    assert not CaseLibrary.objects.exists()


@pytest.mark.parametrize("feedback", ["useful", "not_useful"])
def test_a_running_session_is_409_and_unchanged(api, feedback) -> None:
    DiagnosisSessionFactory(session_id="fb-1")
    before = state()

    response = post(api, {"sessionId": "fb-1", "feedback": feedback})

    assert response.status_code == 409
    assert response.json() == {
        "success": False,
        "message": "会话仍在执行中，执行结束后才能反馈。",
        "caseId": None,
    }
    assert state() == before


@pytest.mark.parametrize(
    "answer",
    [None, "", "   ", "\u3000\n\xa0\u2028\t\x1c\u205f", " \u200b\u200c\u200d\u2060\ufeff "],
)
def test_useful_on_a_session_without_an_answer_is_409(api, answer) -> None:
    DiagnosisSessionFactory(session_id="fb-1", status="FAILED", answer=answer)
    before = state()

    response = post(api, {"sessionId": "fb-1", "feedback": "useful"})

    assert response.status_code == 409
    assert response.json() == {
        "success": False,
        "message": "这个会话没有答案，不能标记为有用。",
        "caseId": None,
    }
    assert state() == before


# A page holds a feedback token, a back end an API key: a 401 names both ways in.
NO_CREDENTIAL = (
    "缺少或无效的凭据：请求头应为 'Authorization: Api-Key <key>'"
    " 或 'Authorization: Feedback <token>'"
)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer eyJhbGciOi.x.y",
        "Token abc",
        "Api-Key wrong",
        "Api-Key AbCdEfGh.0123456789abcdef0123456789abcdef",
    ],
)
def test_a_request_without_a_valid_key_or_token_is_401_naming_both_ways_in(
    client, finished, header
) -> None:
    kwargs = {"HTTP_AUTHORIZATION": header} if header else {}

    response = client.post(
        URL, {"sessionId": "fb-1", "feedback": "useful"}, content_type="application/json", **kwargs
    )

    assert response.status_code == 401
    assert response.json() == {"success": False, "message": NO_CREDENTIAL, "caseId": None}
    assert list(response.json()) == ["success", "message", "caseId"]
    assert response["WWW-Authenticate"] == "Api-Key"
    assert state()[1] is None


def test_a_revoked_key_is_401(make_client, finished) -> None:
    client = make_client("frontend")
    client.api_key.revoked = True
    client.api_key.save()

    response = post(client, {"sessionId": "fb-1", "feedback": "useful"})

    assert response.status_code == 401
    assert response.json()["message"] == NO_CREDENTIAL


def test_a_frontend_key_may_submit_feedback_but_an_agent_key_may_not(make_client, finished) -> None:
    assert (
        post(make_client("frontend"), {"sessionId": "fb-1", "feedback": "useful"}).status_code
        == 200
    )

    response = post(make_client("agent"), {"sessionId": "fb-1", "feedback": "not_useful"})

    assert response.status_code == 403
    assert response.json() == {
        "success": False,
        "message": "该 API Key 无权提交反馈",
        "caseId": None,
    }
    assert state()[1] == "useful"


@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
def test_other_methods_are_405_in_the_contract_shape(api, finished, method) -> None:
    response = getattr(api, method)(URL)

    assert response.status_code == 405
    assert response.json() == {"success": False, "message": "只支持 POST 请求", "caseId": None}


def test_a_trailing_slash_is_not_an_alias(api, finished) -> None:
    response = api.post(URL + "/", {"sessionId": "fb-1", "feedback": "useful"}, format="json")

    assert response.status_code == 404
    assert state()[1] is None


def test_a_body_over_the_limit_is_413_in_the_contract_shape(api, finished, settings) -> None:
    settings.API_MAX_BODY_BYTES = 2048
    body = {"sessionId": "fb-1", "feedback": "useful", "padding": "x" * 4096}

    response = post(api, body)

    assert response.status_code == 413
    assert response.json() == {"success": False, "message": "请求体过大", "caseId": None}
    assert state()[1] is None


def test_too_many_requests_from_one_key_are_429_in_the_contract_shape(
    api, finished, settings
) -> None:
    settings.FEEDBACK_RATE_LIMIT = "3/min"
    from django.core.cache import cache

    cache.clear()
    codes = [
        post(api, {"sessionId": "fb-1", "feedback": "not_useful"}).status_code for _ in range(4)
    ]

    response = post(api, {"sessionId": "fb-1", "feedback": "useful"})

    assert codes == [200, 200, 200, 429]
    assert response.status_code == 429
    assert response.json() == {
        "success": False,
        "message": "请求过于频繁，请稍后再试",
        "caseId": None,
    }
    assert int(response["Retry-After"]) > 0
    assert state()[1] == "not_useful"
    cache.clear()


def test_useful_and_its_repeat_stay_within_a_handful_of_queries(
    api, finished, django_assert_max_num_queries
) -> None:
    # the key, the session under its lock, the feedback, the case (and the test
    # transaction's savepoint around the request's transaction)
    with django_assert_max_num_queries(6):
        assert post(api, {"sessionId": "fb-1", "feedback": "useful"}).status_code == 200
    with django_assert_max_num_queries(4):
        assert post(api, {"sessionId": "fb-1", "feedback": "useful"}).status_code == 200

    assert CaseLibrary.objects.filter(diagnosis_id="fb-1").count() == 1


def test_not_useful_and_its_repeat_stay_within_a_couple_of_queries(
    api, finished, django_assert_max_num_queries
) -> None:
    with django_assert_max_num_queries(2):
        assert post(api, {"sessionId": "fb-1", "feedback": "not_useful"}).status_code == 200
    with django_assert_max_num_queries(2):
        assert post(api, {"sessionId": "fb-1", "feedback": "not_useful"}).status_code == 200
    assert state()[1] == "not_useful"
