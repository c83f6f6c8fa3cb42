"""The operations glossary: a question's words bring their counterparts in the other
language into the search (caselibrary/search_glossary.py)."""

import pytest
from django.core.cache import cache

from caselibrary.search_backends import database
from caselibrary.search_engine import rank_cases
from caselibrary.search_glossary import counterparts
from caselibrary.search_text import search_terms
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory


def counterparts_of(question: str) -> list[str]:
    return counterparts(search_terms(question).split())


def test_an_english_question_brings_the_chinese_words_for_its_terms() -> None:
    found = counterparts_of("payment service memory leak")

    assert {"支付", "服务", "内存", "泄漏"} <= set(found)


def test_a_chinese_question_brings_the_english_words_for_its_terms() -> None:
    found = counterparts_of("连接池耗尽")

    assert {"connection", "pool", "exhausted"} <= set(found)


def test_a_phrase_counts_only_when_the_question_holds_all_its_words() -> None:
    assert "复制延迟" not in counterparts_of("replication is fine")
    assert "replication" in counterparts_of("主从复制延迟")


def test_words_the_question_already_holds_are_not_brought_again() -> None:
    found = counterparts_of("CPU 使用率 cpu usage")

    assert "cpu" not in found and "使用率" not in found


def test_a_question_without_glossary_words_brings_nothing() -> None:
    assert counterparts_of("zookeeper quorum") == []
    assert counterparts_of("") == []


@pytest.fixture
def failures(db):  # type: ignore[no-untyped-def]
    cases = [
        CaseLibraryFactory(
            title=f"订单服务第 {n} 次发布失败", root_cause="镜像拉取失败", solution="重试发布"
        )
        for n in range(4)
    ]
    cases.append(
        CaseLibraryFactory(title="支付回调超时", root_cause="下游网关超时", solution="调大超时")
    )
    case_index_build()
    return cases


def lexically_ranked(query: str) -> set[str]:
    ranked = rank_cases(query=query, limit=5)
    return {hit.case_id for hit in ranked.candidates if hit.lexical_rank is not None}


def test_a_glossary_word_most_passages_hold_stays_out_of_the_full_text_query(
    failures, settings, monkeypatch
) -> None:
    # A library this small is below the size where a word costs a full-text query much.
    monkeypatch.setattr(database, "COMMON_TERMS_FROM", 1)
    cache.clear()  # what an earlier test's library left (one entry per share)
    settings.CASE_SEARCH_COMMON_SHARE = 0.5
    common = lexically_ranked("deployment failure")
    rare = lexically_ranked("payment callback timeout")
    settings.CASE_SEARCH_COMMON_SHARE = 1.0
    every = lexically_ranked("deployment failure")

    assert common == set()
    assert every == {case.case_id for case in failures[:4]}
    assert rare == {failures[4].case_id}
    cache.clear()


def test_in_a_small_library_no_glossary_word_is_left_out(failures, settings) -> None:
    settings.CASE_SEARCH_COMMON_SHARE = 0.5

    assert lexically_ranked("deployment failure") == {case.case_id for case in failures[:4]}
