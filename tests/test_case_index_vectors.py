"""The case-search index's vectors and passages: the dense ranking, the vectors a process
holds, and passages written again only where their text changed."""

import numpy as np
import pytest

from caselibrary import embedding
from caselibrary.models import CaseLibrary, CasePassage
from caselibrary.search_backends.base import get_backend
from caselibrary.search_backends.vector_matrix import VectorMatrix
from caselibrary.services.cases import case_update
from caselibrary.services.index import (
    case_index_build,
)
from tests.case_index_reads import found_ids, manual_case
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db


def indexed_vectors(*titles: str) -> dict[str, np.ndarray]:
    """Index a case of each title; every stored passage vector by passage id."""
    for title in titles:
        CaseLibraryFactory(title=title, error_code=None)
    case_index_build()
    return {
        f"{case_id}:{number}": np.frombuffer(blob, dtype="<f4")
        for case_id, number, blob in CasePassage.objects.values_list("case_id", "number", "vector")
    }


def test_the_dense_ranking_is_the_cosine_ranking_of_the_stored_vectors() -> None:
    stored = indexed_vectors(
        "Kafka consumer lag keeps growing",
        "Kafka 消费者组频繁 rebalance",
        "磁盘写满：/var/log 日志未轮转",
        "Redis maxmemory 触发大量 key 淘汰",
        "MySQL 主从延迟持续增长",
    )
    question = embedding.embed_query("kafka consumers fall behind")

    ranked = get_backend().dense(question, 6)

    exact = sorted(((float(v @ question), pid) for pid, v in stored.items()), reverse=True)[:6]
    assert [pid for pid, _ in ranked] == [pid for _, pid in exact]
    # The held vectors are 4 bits a component; the scores are the stored vectors' own.
    assert [score for _, score in ranked] == pytest.approx([c for c, _ in exact], abs=1e-6)


def test_neighbours_far_below_a_bar_keep_their_held_score_and_those_near_it_are_exact() -> None:
    stored = indexed_vectors(
        "Kafka consumer lag keeps growing",
        "Kafka consumer lag keeps growing on the payments topic",
        "磁盘写满：/var/log 日志未轮转",
        "Redis maxmemory 触发大量 key 淘汰",
    )
    question = embedding.embed_query("Kafka consumer lag keeps growing")

    [found] = get_backend().dense_each([question], 20, rescore_above=0.5)

    assert {pid for pid, _ in found} == set(stored)
    for pid, score in found:
        exact = float(stored[pid] @ question)
        if exact >= 0.55:
            assert score == pytest.approx(exact, abs=1e-6)
        else:  # the 4-bit score
            assert score == pytest.approx(exact, abs=0.03)
    far = [(score, float(stored[pid] @ question)) for pid, score in found]
    far = [(score, exact) for score, exact in far if exact < 0.45]
    assert far and any(abs(score - exact) > 1e-4 for score, exact in far)  # not read again


def nearest(held: VectorMatrix, vectors: np.ndarray, limit: int) -> list[list[tuple[str, float]]]:
    """Each vector's nearest passages by the held scores, as passage ids."""
    return [
        [(held.passage_id(row), float(score)) for row, score in zip(rows, scores, strict=True)]
        for rows, scores in held.nearest_rows(vectors, limit)
    ]


def test_the_vectors_a_process_holds_grow_past_the_room_it_loaded_with() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((6, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    held = VectorMatrix(8, capacity=2)  # loaded with room for two passages

    for n in range(5):
        held.add(f"case-{n}", [0], vectors[n : n + 1])
    held.drop("case-1")
    held.add("case-5", [0], vectors[5:6])

    assert len(held) == 5
    for n in (0, 2, 3, 4, 5):
        assert nearest(held, vectors[n : n + 1], 1)[0][0][0] == f"case-{n}:0"
    assert "case-1:0" not in [pid for pid, _ in nearest(held, vectors[1:2], 6)[0]]


def test_many_vectors_find_their_neighbours_in_one_scan_as_each_alone_would(
    monkeypatch,
) -> None:
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((40, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    held = VectorMatrix(16, capacity=40)
    for n in range(40):
        held.add(f"case-{n}", [0], vectors[n : n + 1])
    held.drop("case-3")
    # Room for the scores of three questions at a time: the questions come in chunks.
    monkeypatch.setattr(VectorMatrix, "SCORES_HELD", 3 * 40)

    together = nearest(held, vectors[:10], 5)

    alone = [nearest(held, vectors[n : n + 1], 5)[0] for n in range(10)]
    assert [[pid for pid, _ in hits] for hits in together] == [
        [pid for pid, _ in hits] for hits in alone
    ]
    assert np.allclose(
        [[score for _, score in hits] for hits in together],
        [[score for _, score in hits] for hits in alone],
        atol=1e-5,
    )
    assert all(together[n][0][0] == f"case-{n}:0" for n in range(10) if n != 3)
    assert all("case-3:0" not in [pid for pid, _ in hits] for hits in together)


def passage_rows(case: CaseLibrary) -> dict[str, int]:
    return dict(CasePassage.objects.filter(case_id=case.case_id).values_list("kind", "id"))


def test_indexing_a_case_again_rewrites_only_the_passages_whose_text_changed() -> None:
    case = manual_case(title="Kafka 消费延迟持续增长", root_cause="分区的消费者卡在一条坏消息上")
    case_index_build()
    before = passage_rows(case)

    CaseLibrary.objects.filter(pk=case.pk).update(updated_by="ops.reviewer")
    case_index_build()
    unchanged = passage_rows(case)
    case = CaseLibrary.objects.get(pk=case.pk)
    case_update(case=case, updated_by="ops.curator", solution="跳过这条坏消息")
    case_index_build()
    edited = passage_rows(case)

    assert unchanged == before
    assert edited["title"] == before["title"] and edited["root_cause"] == before["root_cause"]
    assert edited["solution"] != before["solution"]
    assert found_ids("跳过坏消息") == [case.case_id]
