"""The operations glossary: a question's words bring their counterparts in the other
language into the search (caselibrary/search_glossary.py)."""

from caselibrary.search_glossary import counterparts
from caselibrary.search_text import search_terms


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
