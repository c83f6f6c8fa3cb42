"""A question asked again word for word finds the case made from its first answer as an
exact hit (L0), however long it is: that case's title is the question's first 100
characters (SPEC §4), and the question, longer, was compared with the title whole."""

import pytest

from caselibrary.services.index import case_index_build
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

# 107 characters: a case made from it is titled with the first 100.
LONG_QUESTION = (
    "生产环境 payment-service 在晚高峰期间出现大量请求超时，网关日志显示上游连接被重置，"
    "同时 MySQL 主库的活跃连接数接近最大连接数上限了，慢查询日志里出现大量锁等待，"
    "请帮忙定位根因并给出处理步骤"
)


def search(api, query: str) -> dict:  # type: ignore[no-untyped-def]
    response = api.post(
        "/api/cases/search", {"sessionId": "asked-again", "query": query}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_a_long_question_asked_again_is_an_exact_hit_on_the_case_its_answer_made(api) -> None:
    assert len(LONG_QUESTION) > 100
    DiagnosisSessionFactory(session_id="first-time", query=LONG_QUESTION)
    api.post(
        "/api/sessions/first-time/complete",
        {"status": "SUCCESS", "answer": "根因：连接池耗尽。\n1. 扩容连接池\n2. 杀掉长事务"},
        format="json",
    )
    case_id = api.post(
        "/api/feedback", {"sessionId": "first-time", "feedback": "useful"}, format="json"
    ).json()["caseId"]
    case_index_build()
    DiagnosisSessionFactory(session_id="asked-again")

    body = search(api, LONG_QUESTION)

    assert body["matchLevel"] == "L0"
    assert body["hits"][0]["caseId"] == case_id
