"""Whatever the Milvus client raises in a search, the search answers from the database and
says it is degraded, as for a server that cannot be reached; no log line, error or
/readyz answer carries the password of the URI or the token."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.test import Client
from pymilvus import MilvusClient

from caselibrary.search_backends import base
from caselibrary.search_backends.milvus import BackendUnavailable, MilvusBackend
from caselibrary.search_text import search_terms
from tests.processes import free_port
from tests.test_settings import ROOT

PASSWORD = "MilvusPwLeak9"
TOKEN = "root:MilvusTokenPw7"


def indexed_case():  # type: ignore[no-untyped-def]
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
    return case


def search(api):  # type: ignore[no-untyped-def]
    return api.post("/api/cases/search", {"query": "下单报错 ERROR 1205 锁等待超时"}, format="json")


def search_index_on_readyz() -> str:
    return Client().get("/readyz").json()["checks"]["search_index"]


@pytest.mark.django_db
def test_a_uri_the_client_refuses_makes_the_search_degraded_and_logs_no_password(
    api, settings, monkeypatch, caplog
) -> None:
    settings.CASE_SEARCH_BACKEND = "database"
    case = indexed_case()
    # Set in code, past the start-up check: the client raises a MilvusException of its own
    # ("uri: ... is illegal"), which is no connection error and holds the whole URI.
    settings.CASE_SEARCH_BACKEND = "milvus"
    settings.MILVUS_URI = f"root:{PASSWORD}@127.0.0.1:{free_port()}"
    settings.MILVUS_TOKEN = TOKEN
    monkeypatch.setattr(base, "_instances", {})

    response = search(api)
    readiness = search_index_on_readyz()

    assert response.status_code == 200
    body = response.json()
    assert body["degraded"] is True
    assert body["hits"][0]["caseId"] == case.case_id
    assert "case search degraded: Milvus at 127.0.0.1:" in caplog.text
    assert readiness.startswith("unavailable: Milvus at 127.0.0.1:")
    assert_no_credential_in(caplog.text, readiness)


def with_credentials(milvus_uri: str, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Milvus Lite has no authorization: the credentials are carried and never checked.
    settings.MILVUS_URI = milvus_uri.replace("http://", f"http://root:{PASSWORD}@")
    settings.MILVUS_TOKEN = TOKEN
    monkeypatch.setattr(base, "_instances", {})


def assert_no_credential_in(*texts: str) -> None:
    for secret in (PASSWORD, "MilvusTokenPw7"):
        for text in texts:
            assert secret not in text


@pytest.mark.integration
@pytest.mark.django_db
def test_a_milvus_error_that_is_no_connection_error_makes_the_search_degraded_once(
    milvus_search, milvus_uri, api, settings, monkeypatch, caplog
) -> None:
    indexed_case()
    with_credentials(milvus_uri, settings, monkeypatch)
    assert search(api).json()["degraded"] is False
    # Released under the service: the server refuses the search (collection not loaded).
    MilvusClient(uri=milvus_uri).release_collection(milvus_search.collection)

    refused = search(api)

    assert refused.status_code == 200
    assert refused.json()["degraded"] is True
    assert "failed the lexical search: Collection" in caplog.text
    assert_no_credential_in(caplog.text)
    # The next call connected again, checked the collection and loaded it.
    assert search(api).json()["degraded"] is False
    assert search_index_on_readyz() == "ok"


@pytest.mark.integration
@pytest.mark.django_db
def test_a_milvus_that_keeps_refusing_the_search_is_unavailable_on_readyz(
    milvus_search, milvus_uri, api, settings, monkeypatch, caplog
) -> None:
    case = indexed_case()
    with_credentials(milvus_uri, settings, monkeypatch)
    settings.MILVUS_DB_NAME = "no_such_database"

    refused = search(api)
    readiness = search_index_on_readyz()

    assert refused.status_code == 200
    assert refused.json()["degraded"] is True
    assert refused.json()["hits"][0]["caseId"] == case.case_id
    assert readiness.startswith("unavailable: Milvus at http://127.0.0.1:")
    assert "does not exist" in readiness
    assert_no_credential_in(caplog.text, readiness)


SCRIPT = """
import django

django.setup()
from caselibrary.search_backends.milvus import BackendUnavailable, MilvusBackend

try:
    MilvusBackend(uri="http://127.0.0.1:1", timeout=1).count()
except BackendUnavailable as exc:
    print("unavailable:", exc)
"""


def test_a_milvus_uri_in_the_environment_the_client_cannot_import_with_is_no_crash() -> None:
    # pymilvus reads MILVUS_URI when imported; with the database backend start-up does not
    # judge it, and a backend made in code still fails plainly, without the password.
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "1",
            "CASE_SEARCH_BACKEND": "database",
            "MILVUS_URI": f"root:{PASSWORD}@milvus.internal:19530",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("unavailable: the Milvus client cannot be imported: ")
    assert "milvus.internal:19530" in result.stdout
    assert PASSWORD not in result.stdout + result.stderr


def test_a_backend_error_names_the_server_without_its_credentials() -> None:
    backend = MilvusBackend(
        uri=f"root:{PASSWORD}@127.0.0.1:{free_port()}", token=TOKEN, collection="c", timeout=1
    )

    with pytest.raises(BackendUnavailable) as raised:
        backend.lexical(search_terms("超时"), 10)

    shown = str(raised.value)
    assert shown.startswith("Milvus at 127.0.0.1:")
    assert PASSWORD not in shown and "MilvusTokenPw7" not in shown
    assert raised.value.__cause__ is None or PASSWORD not in str(raised.value.__cause__)
    assert PASSWORD not in repr(backend)
