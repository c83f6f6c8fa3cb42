"""A Milvus collection lost under a running service (dropped, a new or emptied server, a
lost data directory, a restore): the service queues every case for the indexer again, as
`reindex_cases --all` does, says so once, and the indexer writes the cases back from the
vectors the database keeps, embedding none of them again."""

from __future__ import annotations

import logging

import pytest
from pymilvus import MilvusClient

from caselibrary.models import CaseChange, CaseLibrary, CasePassage
from caselibrary.search_backends import base
from caselibrary.search_backends.milvus import MilvusBackend
from caselibrary.search_text import search_terms
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

CASES = [
    ("订单库锁等待超时", "长事务持有行锁", "杀掉长事务，拆小批量更新", "ERROR 1205"),
    ("Kafka 消费积压", "消费者线程被慢下游拖住", "扩分区并加消费者", None),
    ("Redis 内存打满", "驱逐策略未配置，大 key 堆积", "配置 allkeys-lru 并拆分大 key", None),
]
REFILL = "queued for the indexer again"


def indexed_library() -> list[CaseLibrary]:
    cases = [
        CaseLibraryFactory(title=title, root_cause=cause, solution=fix, error_code=code)
        for title, cause, fix, code in CASES
    ]
    case_index_build()
    return cases


def refill_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.levelno == logging.WARNING and REFILL in record.getMessage()
    ]


def cases_found(backend: MilvusBackend, words: str) -> set[str]:
    return {pid.rpartition(":")[0] for pid, _score in backend.lexical(search_terms(words), 10)}


def search(api, query: str) -> dict:  # type: ignore[no-untyped-def]
    response = api.post("/api/cases/search", {"query": query}, format="json")
    assert response.status_code == 200
    return response.json()


def test_a_dropped_collection_is_made_anew_and_refilled_from_the_stored_vectors(
    milvus_search: MilvusBackend, milvus_uri: str, api, caplog
) -> None:
    caplog.set_level(logging.INFO)
    cases = indexed_library()
    passages = CasePassage.objects.count()
    assert cases_found(milvus_search, "消费者线程") == {cases[1].case_id}

    MilvusClient(uri=milvus_uri).drop_collection(milvus_search.collection)
    # Searches answer as they can meanwhile: the exact code from the database.
    by_code = search(api, "下单报错 ERROR 1205")
    search(api, "Redis 内存打满")

    assert by_code["hits"][0]["caseId"] == cases[0].case_id
    assert sorted(CaseChange.objects.values_list("case_id", flat=True)) == sorted(
        case.case_id for case in cases
    )
    [warning] = refill_warnings(caplog)
    assert milvus_search.collection in warning and "every case (3)" in warning

    caplog.clear()
    assert case_index_build() == len(cases)

    indexed = [record for record in caplog.records if record.getMessage() == "cases indexed"]
    assert sum(record.cases for record in indexed) == len(cases)
    assert sum(record.embedded for record in indexed) == 0
    assert milvus_search.count() == passages
    assert cases_found(milvus_search, "消费者线程") == {cases[1].case_id}
    assert search(api, "消费者线程被拖住，消息积压")["degraded"] is False


def test_an_empty_collection_found_by_every_process_queues_the_cases_once(
    milvus_search: MilvusBackend, milvus_uri: str, settings, monkeypatch, caplog
) -> None:
    cases = indexed_library()
    MilvusClient(uri=milvus_uri).drop_collection(milvus_search.collection)
    # Made again, empty, by a process of another deployment sharing the server (or a
    # server restored empty): this service's processes find it when they next check it.
    MilvusBackend(uri=milvus_uri, collection=settings.MILVUS_COLLECTION).count()

    for _process in range(3):
        monkeypatch.setattr(base, "_instances", {})
        assert base.get_backend().lexical("kafka", 10) == []

    assert CaseChange.objects.count() == len(cases)
    assert len(refill_warnings(caplog)) == 1
    case_index_build()
    assert base.get_backend().count() == CasePassage.objects.count()


def test_the_first_cases_indexed_into_a_new_collection_queue_nothing(
    milvus_search: MilvusBackend, caplog
) -> None:
    CaseLibraryFactory(title="磁盘写满", root_cause="日志未轮转", solution="配置 logrotate")

    assert case_index_build() == 1

    assert not CaseChange.objects.exists()
    assert refill_warnings(caplog) == []
    assert milvus_search.count() == CasePassage.objects.count()


def test_a_collection_dropped_while_no_one_searches_is_refilled_by_the_indexers_next_write(
    milvus_search: MilvusBackend, milvus_uri: str, caplog
) -> None:
    caplog.set_level(logging.INFO)
    cases = indexed_library()
    MilvusClient(uri=milvus_uri).drop_collection(milvus_search.collection)
    new = CaseLibraryFactory(title="磁盘写满", root_cause="日志未轮转", solution="配置 logrotate")

    case_index_build()

    assert len(refill_warnings(caplog)) == 1
    assert not CaseChange.objects.exists()
    assert milvus_search.count() == CasePassage.objects.count()
    assert cases_found(milvus_search, "消费者线程") == {cases[1].case_id}
    assert cases_found(milvus_search, "logrotate") == {new.case_id}
