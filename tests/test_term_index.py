"""The term index a MariaDB/MySQL serving process ranks passages with: BM25 as SQLite's
FTS5 computes it, kept current passage by passage."""

import sqlite3

import pytest

from caselibrary.search_backends import term_index
from caselibrary.search_backends.database import lexemes
from caselibrary.search_backends.term_index import TermIndex
from caselibrary.search_text import search_terms
from tests.search_quality.evaluate import load_library

QUESTIONS = [
    "Kafka 消费延迟持续增长",
    "payment-service CPU 使用率 95%",
    "pods evicted because the node disk filled up",
    "证书过期 kubelet Unauthorized",
    "ORA-01555 snapshot too old",
    "connection pool exhausted timeout",
]


def library_passages() -> list[tuple[str, int, str]]:
    """The labelled set's cases, their title, root cause and solution as three passages."""
    passages = []
    for case in load_library():
        for number, field in enumerate(("title", "root_cause", "solution")):
            terms = search_terms(case.get(field) or "")
            if terms:
                passages.append((case["key"], number, terms))
    return passages


def fts5_ranking(passages: list[tuple[str, int, str]], question: str) -> list[tuple[str, float]]:
    """What SQLite's FTS5 answers for the same passages, queried as the backend does."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE fts USING fts5(lexemes, tokenize = 'unicode61')")
    db.executemany(
        "INSERT INTO fts (rowid, lexemes) VALUES (?, ?)",
        [(row, lexemes(terms)) for row, (_, _, terms) in enumerate(passages, start=1)],
    )
    keys = list(dict.fromkeys(lexemes(search_terms(question)).split()))
    rows = db.execute(
        "SELECT rowid, -bm25(fts) AS score FROM fts WHERE fts MATCH ? ORDER BY score DESC, rowid",
        [" OR ".join(keys)],
    ).fetchall()
    return [(f"{passages[row - 1][0]}:{passages[row - 1][1]}", score) for row, score in rows]


@pytest.fixture(params=["one segment", "segments of 40 tokens"])
def segments(request, monkeypatch) -> None:
    """The index built in one segment, and in many (as a large library is)."""
    if request.param != "one segment":
        monkeypatch.setattr(term_index, "SEGMENT_TOKENS", 40)


@pytest.mark.parametrize("question", QUESTIONS)
def test_passages_rank_and_score_as_sqlite_fts5_ranks_them(question: str, segments) -> None:
    passages = library_passages()
    index = TermIndex.built(passages)

    ours = index.search(search_terms(question).split(), 20)
    theirs = fts5_ranking(passages, question)[:20]

    assert len(ours) == len(theirs) > 0
    assert [score for _, score in ours] == pytest.approx([score for _, score in theirs], rel=1e-6)
    assert {pid for pid, _ in ours[:5]} == {pid for pid, _ in theirs[:5]}


def test_a_passage_added_after_the_load_is_found_and_a_dropped_case_is_not(segments) -> None:
    index = TermIndex.built(
        [
            ("redis", 0, search_terms("Redis maxmemory 触发大量 key 淘汰")),
            ("kafka", 0, search_terms("Kafka 消费延迟持续增长")),
            ("kafka", 1, search_terms("Kafka consumer 消费者组 rebalance 频繁")),
        ]
    )

    index.add("disk", 0, search_terms("节点磁盘写满 pod 被驱逐"))
    index.drop("kafka")

    assert [pid for pid, _ in index.search(search_terms("磁盘 写满").split(), 5)] == ["disk:0"]
    assert index.search(search_terms("Kafka 消费延迟").split(), 5) == []
    assert index.held(["redis", "kafka"]) == {"redis"}
    assert len(index) == 2  # both of the dropped case's passages are gone


def test_a_case_indexed_again_is_ranked_by_its_new_terms_only() -> None:
    index = TermIndex.built([("pool", 0, search_terms("数据库连接池耗尽"))])

    index.drop("pool")
    index.add("pool", 0, search_terms("网络抖动导致超时"))

    assert index.search(search_terms("连接池").split(), 5) == []
    assert [pid for pid, _ in index.search(search_terms("网络抖动").split(), 5)] == ["pool:0"]
    assert index.dead_share() == 0.5


def test_scores_count_only_live_passages_as_fts5_would_after_a_delete(segments) -> None:
    passages = [
        ("a", 0, search_terms("磁盘 写满 告警")),
        ("b", 0, search_terms("磁盘 IO 延迟")),
        ("c", 0, search_terms("内存 泄漏")),
    ]
    index = TermIndex.built(passages)
    index.drop("c")

    fresh = TermIndex.built(passages[:2])

    question = search_terms("磁盘 写满").split()
    assert index.search(question, 5) == pytest.approx(fresh.search(question, 5))


def test_a_question_of_terms_no_passage_holds_finds_nothing() -> None:
    index = TermIndex.built([("a", 0, search_terms("磁盘写满"))])

    assert index.search(["mongodb"], 5) == []
    assert TermIndex.built([]).search(["mongodb"], 5) == []
