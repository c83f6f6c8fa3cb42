"""Two environments (staging and production) pointed at one Milvus server with the same
MILVUS_COLLECTION: the collection records which installation made it (the database's id
and the queue's name), and another installation refuses it, as it refuses a collection of
another model, instead of overwriting the first one's passages and saying it is ready."""

from __future__ import annotations

import logging

import pytest
from django.test import Client
from pymilvus import MilvusClient

from caselibrary.models import CaseIndexState
from caselibrary.search_backends import base, milvus_collection
from caselibrary.search_backends.milvus import IndexStale, MilvusBackend
from caselibrary.search_text import search_terms
from tests.test_milvus_client_errors import indexed_case
from tests.test_search_milvus import passage

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

OWNER = "caselibrary.owner"
REFUSAL = "belongs to another installation"


def as_environment(settings, monkeypatch, name: str) -> None:  # type: ignore[no-untyped-def]
    """This process as the environment whose queue is `name`, with a backend made anew."""
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "name": name}
    monkeypatch.setattr(base, "_instances", {})


def recorded(milvus_uri: str, name: str) -> dict[str, str]:
    return MilvusClient(uri=milvus_uri).describe_collection(name)["properties"]


def search(api) -> dict:  # type: ignore[no-untyped-def]
    response = api.post("/api/cases/search", {"query": "订单库 锁等待超时"}, format="json")
    assert response.status_code == 200
    return response.json()


def search_index_on_readyz() -> str:
    return Client().get("/readyz").json()["checks"]["search_index"]


def test_the_installation_id_is_made_once_and_kept_in_the_database() -> None:
    made = milvus_collection.installation()

    assert len(made) == 32
    assert milvus_collection.installation() == made
    assert CaseIndexState.objects.get(id=1).installation == made


def test_a_library_whose_state_row_exists_gets_its_id_in_that_row() -> None:
    CaseIndexState.objects.update_or_create(id=1, defaults={"version": "some-model"})

    made = milvus_collection.installation()

    assert CaseIndexState.objects.get(id=1).installation == made
    assert CaseIndexState.objects.get(id=1).version == "some-model"


def test_a_collection_records_the_installation_that_made_it_and_it_keeps_using_it(
    milvus_search: MilvusBackend, milvus_uri: str, api
) -> None:
    case = indexed_case()

    owner = recorded(milvus_uri, milvus_search.collection)[OWNER]
    assert milvus_collection.installation() in owner
    again = MilvusBackend(uri=milvus_uri, collection=milvus_search.collection_prefix)
    assert again.count() >= 1
    assert search(api)["hits"][0]["caseId"] == case.case_id
    assert search_index_on_readyz() == "ok"


def test_a_collection_made_by_another_installation_is_refused_and_readyz_says_why(
    milvus_search: MilvusBackend, milvus_uri: str, api, settings, monkeypatch, caplog
) -> None:
    as_environment(settings, monkeypatch, "production")
    case = indexed_case()
    production = recorded(milvus_uri, milvus_search.collection)[OWNER]

    as_environment(settings, monkeypatch, "staging")
    found = search(api)
    readiness = search_index_on_readyz()

    assert found["degraded"] is True
    assert found["hits"][0]["caseId"] == case.case_id
    assert readiness.startswith("unavailable: ") and REFUSAL in readiness
    assert "MILVUS_COLLECTION" in readiness
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any(REFUSAL in message for message in errors)
    assert milvus_collection.installation() not in caplog.text + readiness

    staging = MilvusBackend(uri=milvus_uri, collection=milvus_search.collection_prefix)
    with pytest.raises(IndexStale, match=REFUSAL):
        staging.replace(["x"], [passage("x", 0, "预发环境的段落")])
    with pytest.raises(IndexStale, match=REFUSAL):
        staging.clear()
    assert recorded(milvus_uri, milvus_search.collection)[OWNER] == production
    as_environment(settings, monkeypatch, "production")
    assert search(api)["degraded"] is False


def test_a_collection_recording_another_owner_is_refused_as_another_model_is(
    milvus_search: MilvusBackend, milvus_uri: str
) -> None:
    milvus_search.replace(["a"], [passage("a", 0, "生产环境的段落")])
    MilvusClient(uri=milvus_uri).alter_collection_properties(
        milvus_search.collection, properties={OWNER: "diagnosis:0123456789abcdef"}
    )
    fresh = MilvusBackend(uri=milvus_uri, collection=milvus_search.collection_prefix)

    with pytest.raises(IndexStale, match=REFUSAL):
        fresh.lexical(search_terms("生产环境"), 10)
    assert fresh.failure is not None and REFUSAL in fresh.failure


def test_a_collection_an_earlier_release_made_without_an_owner_is_claimed_then_accepted(
    milvus_search: MilvusBackend, milvus_uri: str, settings, monkeypatch
) -> None:
    milvus_search.replace(["a"], [passage("a", 0, "旧版本建的集合")])
    MilvusClient(uri=milvus_uri).drop_collection_properties(
        milvus_search.collection, property_keys=[OWNER]
    )
    assert OWNER not in recorded(milvus_uri, milvus_search.collection)

    claiming = MilvusBackend(uri=milvus_uri, collection=milvus_search.collection_prefix)
    assert claiming.lexical(search_terms("旧版本"), 10)[0][0] == "a:0"

    assert milvus_collection.installation() in recorded(milvus_uri, milvus_search.collection)[OWNER]
    assert MilvusBackend(uri=milvus_uri, collection=milvus_search.collection_prefix).count() == 1
    as_environment(settings, monkeypatch, "staging")
    other = MilvusBackend(uri=milvus_uri, collection=milvus_search.collection_prefix)
    with pytest.raises(IndexStale, match=REFUSAL):
        other.count()
