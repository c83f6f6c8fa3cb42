"""Texts with nothing to match: a question or a case without one search term is no
similar (L1) hit, however close a small model puts two short texts."""

import pytest

from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db

URL = "/api/cases/search"


@pytest.fixture
def library(db):  # type: ignore[no-untyped-def]
    cases = {
        "empty": CaseLibraryFactory(title="t", root_cause="r", solution="s", error_code=None),
        "redis": CaseLibraryFactory(
            title="Redis 内存写满，写入被拒绝",
            error_code=None,
            root_cause="maxmemory 达到上限，淘汰策略为 noeviction，写命令报 OOM。",
            solution="1. 清理大 key\n2. 调整 maxmemory-policy\n3. 扩容",
        ),
    }
    case_index_build()
    return cases


@pytest.mark.parametrize("query", ["hello", "help", "你好", "asdfghjkl"])
def test_a_case_of_one_letter_texts_is_no_answer_to_a_short_question(api, library, query) -> None:
    body = api.post(URL, {"query": query}, format="json").json()

    assert library["empty"].case_id not in [hit["caseId"] for hit in body["hits"]]


@pytest.mark.parametrize("query", ["🔥🔥🔥", "？？？", "502"])
def test_a_question_without_a_search_term_gets_no_similar_case(api, library, query) -> None:
    body = api.post(URL, {"query": query}, format="json").json()

    assert body["matchLevel"] == "NONE"
    assert body["hits"] == []


@pytest.mark.parametrize("query", ["🔥🔥🔥", "502"])
def test_explain_shows_a_question_without_a_search_term_has_none(api, library, query) -> None:
    body = api.post(URL, {"query": query, "explain": True}, format="json").json()

    # However close the nearest case reads, the empty list of terms says why it is not offered.
    assert body["explain"]["terms"] == []
    nearest = body["explain"]["nearestSimilar"]
    assert nearest is None or nearest["offered"] is False


def test_explain_lists_the_terms_a_question_is_searched_by(api, library) -> None:
    body = api.post(URL, {"query": "Redis 写满了", "explain": True}, format="json").json()

    assert "redis" in body["explain"]["terms"]


def test_a_case_with_words_is_still_found_by_them(api, library) -> None:
    body = api.post(URL, {"query": "Redis 写满了，写入报 OOM"}, format="json").json()

    assert body["hits"][0]["caseId"] == library["redis"].case_id


@pytest.fixture
def generic_library(db):  # type: ignore[no-untyped-def]
    """Cases that say "error" and "HTTP" in passing, none about the codes asked for."""
    CaseLibraryFactory(
        title="短信发送失败",
        error_code=None,
        root_cause="短信网关返回 HTTP 429，调用方没有退避，error 日志刷屏。",
        solution="1. 按网关限额退避重试\n2. 降低 error 日志级别",
    )
    CaseLibraryFactory(
        title="NullPointerException in order-service after a release",
        error_code=None,
        root_cause="A new field was read before it was set; every request logged an error.",
        solution="1. Roll back\n2. Default the field",
    )
    case_index_build()


@pytest.mark.parametrize("query", ["ERROR 9999", "error", "Errors", "HTTP 418"])
def test_one_generic_word_a_case_says_in_passing_is_no_similar_case(
    api, generic_library, query
) -> None:
    body = api.post(URL, {"query": query}, format="json").json()

    assert body["matchLevel"] == "NONE", body
    assert body["hits"] == []
