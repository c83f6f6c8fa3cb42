"""A code an operator gives a case, in no known family of error codes, is an exact key."""

import pytest

from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db

URL = "/api/cases/search"


@pytest.fixture
def library(db):  # type: ignore[no-untyped-def]
    cases = {
        "custom": CaseLibraryFactory(
            title="结算批处理卡住",
            error_code="QA3-ERR-001",
            root_cause="结算批处理等待上游对账文件，文件迟到时整批卡住。",
            solution="1. 确认对账文件到达\n2. 手动重跑批处理",
        ),
        "other": CaseLibraryFactory(
            title="Redis 内存写满",
            error_code="OOM",
            root_cause="maxmemory 达到上限，写入被拒绝。",
            solution="1. 清理大 key\n2. 扩容",
        ),
    }
    case_index_build()
    return cases


@pytest.mark.parametrize("query", ["批处理报 QA3-ERR-001 了", "qa3-err-001"])
def test_a_question_quoting_a_cases_own_code_finds_it_as_an_exact_hit(api, library, query) -> None:
    body = api.post(URL, {"query": query}, format="json").json()

    assert body["matchLevel"] == "L0"
    assert body["hits"][0]["caseId"] == library["custom"].case_id


def test_a_word_with_digits_no_case_carries_is_no_exact_hit(api, library) -> None:
    body = api.post(URL, {"query": "结算批处理卡住 QA3-ERR-002"}, format="json").json()

    assert all(hit["matchLevel"] == "L1" for hit in body["hits"])


@pytest.mark.parametrize(
    ("code", "query"),
    [
        ("ERR_RATE_LIMITED", "短信发送报 ERR_RATE_LIMITED 怎么办"),
        ("E_TIMEOUT", "e_timeout"),
        ("InsufficientBalance", "扣款接口返回 InsufficientBalance"),
        ("SQLSTATE HY000", "写入报 SQLSTATE HY000，然后事务回滚"),
    ],
)
def test_a_code_without_digits_or_of_two_words_is_an_exact_hit_when_quoted(
    api, library, code, query
) -> None:
    case = CaseLibraryFactory(
        title="短信网关限流", error_code=code, root_cause="上游限流。", solution="1. 降低发送速率"
    )
    case_index_build()

    body = api.post(URL, {"query": query}, format="json").json()

    assert body["matchLevel"] == "L0"
    assert [hit["caseId"] for hit in body["hits"]] == [case.case_id]


@pytest.mark.parametrize(
    "query", ["短信发送报 ERR_QUOTA_EXCEEDED", "扣款接口返回 InvalidCardNumber"]
)
def test_such_a_word_no_case_carries_is_no_exact_hit(api, library, query) -> None:
    CaseLibraryFactory(title="短信网关限流", error_code="ERR_RATE_LIMITED")
    case_index_build()

    body = api.post(URL, {"query": query}, format="json").json()

    assert body["matchLevel"] != "L0"
