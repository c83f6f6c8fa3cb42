"""The Milvus search backend, against Milvus Lite started as a server on a free port."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from pymilvus import MilvusClient

from caselibrary.embedding import EMBEDDING_DIM
from caselibrary.search_backends import milvus_collection
from caselibrary.search_backends.base import IndexedPassage, get_backend, rrf_fuse
from caselibrary.search_backends.milvus import BackendUnavailable, IndexStale, MilvusBackend
from caselibrary.search_text import search_terms
from tests.milvus_server import milvus_lite_server
from tests.processes import free_port, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def backend(milvus_uri: str) -> MilvusBackend:
    # A collection of its own per test: tests never see each other's passages.
    return MilvusBackend(uri=milvus_uri, collection=f"t_{uuid.uuid4().hex[:12]}")


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=EMBEDDING_DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def towards(vector: np.ndarray, other: np.ndarray, share: float) -> np.ndarray:
    mixed = (1 - share) * vector + share * other
    return (mixed / np.linalg.norm(mixed)).astype(np.float32)


def passage(case: str, n: int, text: str, vector: np.ndarray | None = None) -> IndexedPassage:
    return IndexedPassage(
        passage_id=f"{case}:{n}",
        case_pk=case,
        kind="title" if n == 0 else "section",
        text=text,
        terms=search_terms(text),
        vector=unit(hash((case, n)) % 2**32) if vector is None else vector,
    )


def ids(ranking: list[tuple[str, float]]) -> list[str]:
    return [passage_id for passage_id, _score in ranking]


def test_a_stored_case_is_found_and_counted(backend: MilvusBackend) -> None:
    backend.replace(["cpu"], [passage("cpu", 0, "payment-service CPU 使用率持续超过 90%")])

    assert backend.count() == 1
    assert ids(backend.lexical(search_terms("CPU 使用率"), 10)) == ["cpu:0"]


def test_a_replaced_case_is_found_by_its_new_text_and_no_longer_by_its_old(
    backend: MilvusBackend,
) -> None:
    backend.replace(
        ["db"],
        [passage("db", 0, "数据库连接池耗尽"), passage("db", 1, "重启应用后恢复")],
    )

    backend.replace(["db"], [passage("db", 0, "Redis 内存打满，驱逐策略未配置")])

    assert backend.count() == 1
    assert ids(backend.lexical(search_terms("Redis 内存"), 10)) == ["db:0"]
    assert backend.lexical(search_terms("连接池"), 10) == []
    assert backend.lexical(search_terms("重启应用"), 10) == []


def test_the_terms_a_stored_passage_holds_are_known_and_others_not(
    backend: MilvusBackend,
) -> None:
    backend.replace(["kafka"], [passage("kafka", 0, "Kafka consumer lag keeps growing")])

    assert backend.known_terms(["kafka", "mongodb", "lag", "hbase"]) == {"kafka", "lag"}


def test_a_case_replaced_with_no_passages_is_gone_and_the_others_stay(
    backend: MilvusBackend,
) -> None:
    backend.replace(
        ["a", "b"],
        [passage("a", 0, "磁盘空间不足 disk full"), passage("b", 0, "磁盘 IO 延迟高")],
    )

    backend.replace(["a"], [])

    assert backend.count() == 1
    assert ids(backend.lexical(search_terms("磁盘"), 10)) == ["b:0"]


def test_lexical_search_keeps_error_codes_and_alert_names_whole(backend: MilvusBackend) -> None:
    backend.replace(
        ["snapshot", "table", "alert"],
        [
            passage("snapshot", 0, "ORA-01555 snapshot too old during the nightly export"),
            passage("table", 0, "ORA-00942 table or view does not exist after the migration"),
            passage("alert", 0, "HighCPUUsage fired for the payment pods"),
        ],
    )

    assert ids(backend.lexical(search_terms("ORA-01555"), 10))[0] == "snapshot:0"
    assert ids(backend.lexical(search_terms("ORA-00942"), 10))[0] == "table:0"
    assert ids(backend.lexical(search_terms("HighCPUUsage"), 10)) == ["alert:0"]


def test_lexical_search_finds_chinese_words(backend: MilvusBackend) -> None:
    backend.replace(
        ["pool", "net"],
        [passage("pool", 0, "数据库连接池耗尽导致下单失败"), passage("net", 0, "网络抖动导致超时")],
    )

    assert ids(backend.lexical(search_terms("连接池"), 10)) == ["pool:0"]
    assert ids(backend.lexical(search_terms("网络抖动"), 10)) == ["net:0"]
    assert backend.lexical(search_terms("证书过期"), 10) == []


def test_lexical_scores_are_positive_and_best_first(backend: MilvusBackend) -> None:
    backend.replace(
        ["often", "once"],
        [
            passage("often", 0, "超时 超时 超时 重试风暴"),
            passage("once", 0, "一次超时之后服务恢复了正常"),
        ],
    )

    ranking = backend.lexical(search_terms("超时"), 10)

    assert ids(ranking) == ["often:0", "once:0"]
    assert ranking[0][1] > ranking[1][1] > 0


def test_dense_search_finds_the_nearest_passages_by_cosine(backend: MilvusBackend) -> None:
    query = unit(1)
    backend.replace(
        ["near", "middle", "far"],
        [
            passage("near", 0, "近", towards(unit(2), query, 0.9)),
            passage("middle", 0, "中", towards(unit(3), query, 0.5)),
            passage("far", 0, "远", unit(4)),
        ],
    )

    ranking = backend.dense(query, 2)

    assert ids(ranking) == ["near:0", "middle:0"]
    assert 1.0 >= ranking[0][1] > ranking[1][1] > 0.2
    assert backend.dense(towards(unit(2), query, 0.9), 1)[0][1] == pytest.approx(1.0, abs=1e-4)


def test_hybrid_search_is_the_reciprocal_rank_fusion_of_both_rankings(
    backend: MilvusBackend,
) -> None:
    query = unit(10)
    backend.replace(
        ["both", "words", "meaning", "neither"],
        [
            # Second by words and second by meaning: fused, it beats each ranking's winner.
            passage("both", 0, "订单服务 超时", towards(unit(11), query, 0.6)),
            passage("words", 0, "订单服务 超时 超时 超时", unit(12)),
            passage("meaning", 0, "支付回调失败", towards(unit(13), query, 0.8)),
            passage("neither", 0, "证书即将过期", unit(14)),
        ],
    )
    terms = search_terms("订单服务超时")

    fused = backend.hybrid(terms, query, 3, rrf_k=60)
    expected = rrf_fuse([backend.lexical(terms, 3), backend.dense(query, 3)], k=60, limit=3)

    assert ids(fused)[0] == "both:0"
    assert ids(fused) == ids(expected)
    assert [score for _id, score in fused] == pytest.approx([s for _id, s in expected], rel=1e-4)


def test_hybrid_search_without_terms_ranks_by_meaning_alone(backend: MilvusBackend) -> None:
    query = unit(20)
    backend.replace(["a"], [passage("a", 0, "文本", towards(unit(21), query, 0.9))])

    assert backend.hybrid("", query, 5, rrf_k=60) == [("a:0", pytest.approx(1 / 61))]


def test_clear_drops_every_passage(backend: MilvusBackend) -> None:
    backend.replace(["a", "b"], [passage("a", 0, "一"), passage("b", 0, "二")])

    backend.clear()

    assert backend.count() == 0
    assert backend.lexical(search_terms("一"), 10) == []


def test_passages_of_a_case_not_being_replaced_are_refused(backend: MilvusBackend) -> None:
    with pytest.raises(ValueError, match="not being replaced"):
        backend.replace(["a"], [passage("b", 0, "二")])


def test_a_collection_that_records_another_model_is_refused_until_rebuilt(
    backend: MilvusBackend, milvus_uri: str
) -> None:
    backend.replace(["a"], [passage("a", 0, "旧模型的向量")])
    MilvusClient(uri=milvus_uri).alter_collection_properties(
        backend.collection, properties={"caselibrary.embedding_model": "another-model"}
    )
    fresh = MilvusBackend(uri=milvus_uri, collection=backend.collection_prefix)

    with pytest.raises(IndexStale, match="reindex_cases --all"):
        fresh.lexical(search_terms("旧模型"), 10)
    with pytest.raises(IndexStale):
        fresh.replace(["a"], [passage("a", 0, "新模型")])

    fresh.clear()
    fresh.replace(["a"], [passage("a", 0, "新模型的向量")])
    assert ids(fresh.lexical(search_terms("新模型"), 10)) == ["a:0"]


def test_another_embedding_model_indexes_into_a_collection_of_its_own(
    backend: MilvusBackend, milvus_uri: str, monkeypatch
) -> None:
    backend.replace(["a"], [passage("a", 0, "旧模型的向量")])
    prefix = backend.collection_prefix
    monkeypatch.setattr(milvus_collection, "EMBEDDING_MODEL", "another-model")

    changed = MilvusBackend(uri=milvus_uri, collection=prefix)

    assert changed.collection.startswith(prefix) and changed.collection != backend.collection
    assert changed.count() == 0
    changed.replace(["a"], [passage("a", 0, "新模型的向量")])
    assert ids(changed.lexical(search_terms("新模型"), 10)) == ["a:0"]
    assert ids(backend.lexical(search_terms("旧模型"), 10)) == ["a:0"]


def test_an_unreachable_server_raises_a_clear_error_without_the_token() -> None:
    backend = MilvusBackend(
        uri=f"http://127.0.0.1:{free_port()}",
        token="root:do-not-show-me",
        collection="case_passages",
        timeout=2,
    )

    with pytest.raises(BackendUnavailable, match=r"Milvus at http://127\.0\.0\.1") as raised:
        backend.lexical(search_terms("超时"), 10)

    assert "do-not-show-me" not in str(raised.value)
    assert "do-not-show-me" not in repr(backend)


def test_without_the_milvus_client_installed_the_error_says_what_to_install(
    monkeypatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pymilvus.exceptions", None)
    backend = MilvusBackend(uri="http://127.0.0.1:19530", collection="case_passages")

    with pytest.raises(BackendUnavailable, match=r"pip install '\.\[milvus\]'"):
        backend.lexical(search_terms("超时"), 10)


@pytest.mark.slow
def test_the_backend_answers_again_once_the_server_is_back(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    with milvus_lite_server(data, port=port) as uri:
        backend = MilvusBackend(uri=uri, collection="restarts", timeout=3)
        backend.replace(["a"], [passage("a", 0, "主从延迟")])

    with pytest.raises(BackendUnavailable):
        backend.lexical(search_terms("主从延迟"), 10)

    def found() -> bool:
        try:
            return ids(backend.lexical(search_terms("主从延迟"), 10)) == ["a:0"]
        except BackendUnavailable:
            return False

    with milvus_lite_server(data, port=port):
        # gRPC waits a second or two before it dials a server that was gone again.
        wait_for(found, timeout=20, what="the backend to find the case again")


def test_the_milvus_setting_selects_this_backend(milvus_search, milvus_uri: str) -> None:
    chosen = get_backend()

    assert chosen is milvus_search and isinstance(chosen, MilvusBackend)
    assert chosen.name == "milvus" and chosen.uri == milvus_uri
    chosen.replace(["a"], [passage("a", 0, "慢查询")])
    assert ids(chosen.lexical(search_terms("慢查询"), 10)) == ["a:0"]


def unreachable(settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from caselibrary.search_backends import base

    settings.MILVUS_URI = f"http://127.0.0.1:{free_port()}"
    settings.MILVUS_TIMEOUT = 2
    monkeypatch.setattr(base, "_instances", {})


@pytest.mark.django_db
def test_a_search_with_the_milvus_server_down_answers_by_exact_code_and_says_it_is_degraded(
    milvus_search, api, settings, monkeypatch, caplog
) -> None:
    from caselibrary.services.cases import case_create_manual
    from caselibrary.services.index_pass import case_index_pending

    case = case_create_manual(
        created_by="ops.curator",
        title="订单库锁等待超时",
        root_cause="长事务持有行锁",
        solution="杀掉长事务，拆小批量更新",
        fault_category="DATABASE",
        error_code="ERROR 1205",
    )
    case_index_pending()
    unreachable(settings, monkeypatch)

    response = api.post(
        "/api/cases/search", {"query": "下单报错 ERROR 1205 锁等待超时"}, format="json"
    )

    assert response.status_code == 200
    body = response.json()
    assert body["degraded"] is True
    assert body["matchLevel"] == "L0"
    assert body["hits"][0]["caseId"] == case.case_id
    # The log names the server and the call that failed, not the embedding model.
    assert "case search degraded: Milvus at" in caplog.text
    assert "embedding model" not in caplog.text


@pytest.mark.django_db
def test_a_case_the_milvus_server_refused_is_indexed_once_the_server_answers_again(
    milvus_search, settings, monkeypatch
) -> None:
    from caselibrary.models import CaseChange
    from caselibrary.search_backends import base
    from caselibrary.services.cases import case_create_manual
    from caselibrary.services.index_pass import case_index_pending

    case = case_create_manual(
        created_by="ops.curator",
        title="Kafka 消费积压",
        root_cause="消费者线程被慢下游拖住",
        solution="扩分区并加消费者",
        fault_category="DEPENDENCY",
    )
    reachable = settings.MILVUS_URI
    unreachable(settings, monkeypatch)

    with pytest.raises(BackendUnavailable):
        case_index_pending()
    assert CaseChange.objects.filter(case_id=case.case_id).exists()

    settings.MILVUS_URI = reachable
    monkeypatch.setattr(base, "_instances", {})
    case_index_pending()

    assert not CaseChange.objects.filter(case_id=case.case_id).exists()
    found = base.get_backend().lexical(search_terms("Kafka 消费积压"), 10)
    assert {pid.rpartition(":")[0] for pid, _ in found} == {case.case_id}
