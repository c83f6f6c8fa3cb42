"""A Milvus collection being refilled (found lost, every case queued for the indexer) is
told by /readyz, which stays ready (searches answer, from what is back so far) but says
"N cases waiting to be indexed", and by /metrics: the cases waiting to be indexed."""

from __future__ import annotations

import pytest
from django.test import Client
from pymilvus import MilvusClient

from caselibrary.search_backends.milvus import MilvusBackend
from caselibrary.search_text import search_terms
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory
from tests.metrics_samples import scrape, value

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

WAITING = "diagnosis_case_index_waiting_cases"


def readyz() -> tuple[int, dict[str, str]]:
    response = Client().get("/readyz")
    return response.status_code, response.json()["checks"]


def lost_and_found(milvus_search: MilvusBackend, milvus_uri: str) -> int:
    """An indexed library whose collection is dropped, then found lost by a search."""
    for title in ("订单库锁等待超时", "Kafka 消费积压", "Redis 内存打满"):
        CaseLibraryFactory(title=title, root_cause="根因", solution="处理")
    case_index_build()
    MilvusClient(uri=milvus_uri).drop_collection(milvus_search.collection)
    milvus_search.lexical(search_terms("Kafka"), 5)
    return 3


def test_readyz_stays_ready_and_says_how_many_cases_wait_while_a_refill_runs(
    milvus_search: MilvusBackend, milvus_uri: str
) -> None:
    cases = lost_and_found(milvus_search, milvus_uri)

    status, checks = readyz()

    assert status == 200
    assert checks["search_index"] == f"{cases} cases waiting to be indexed"


def test_metrics_count_the_cases_waiting_to_be_indexed(
    milvus_search: MilvusBackend, milvus_uri: str
) -> None:
    cases = lost_and_found(milvus_search, milvus_uri)

    assert value(scrape(), WAITING) == cases


def test_once_the_indexer_has_refilled_the_collection_both_say_so(
    milvus_search: MilvusBackend, milvus_uri: str
) -> None:
    lost_and_found(milvus_search, milvus_uri)

    case_index_build()

    assert readyz() == (200, {**readyz()[1], "search_index": "ok"})
    samples = scrape()
    assert (WAITING, ()) in samples
    assert value(samples, WAITING) == 0
