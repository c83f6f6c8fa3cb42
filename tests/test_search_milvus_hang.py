"""The Milvus search backend while its server hangs (a stopped process, a network black
hole): the server takes connections and never answers, so every call waits its whole
timeout. Once one call has failed so, the backend fails the next ones at once for
MILVUS_RETRY_SECONDS, then tries the server again.

The server hangs here as it does in production: its process is stopped (SIGSTOP) and
resumed (SIGCONT)."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from caselibrary.embedding import EMBEDDING_DIM
from caselibrary.search_backends.base import IndexedPassage
from caselibrary.search_backends.milvus import BackendUnavailable, MilvusBackend
from caselibrary.search_text import search_terms
from tests.milvus_server import milvus_lite_server
from tests.processes import free_port, wait_for
from tests.test_milvus_client_errors import indexed_case

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TIMEOUT = 2.0


class Server:
    def __init__(self, uri: str, port: int) -> None:
        self.uri = uri
        self.group = _server_group(port)

    @contextmanager
    def hung(self) -> Iterator[None]:
        """The server stopped: its port still takes connections, nothing answers them."""
        os.killpg(self.group, signal.SIGSTOP)
        try:
            yield
        finally:
            self.resume()

    def resume(self) -> None:
        os.killpg(self.group, signal.SIGCONT)


def _server_group(port: int) -> int:
    """The process group of the Milvus Lite server on `port` (its own session)."""
    wanted = [b"tests.milvus_server", b"--port", str(port).encode()]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if all(word in arguments for word in wanted):
            return os.getpgid(int(entry.name))
    raise LookupError(f"no Milvus Lite server on port {port}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # A server of this module's own: stopping it holds up no other test.
    port = free_port()
    with milvus_lite_server(tmp_path_factory.mktemp("milvus-hang") / "data", port=port) as uri:
        found = Server(uri, port)
        try:
            yield found
        finally:
            found.resume()


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=EMBEDDING_DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def stored(server: Server, *, retry_seconds: float) -> MilvusBackend:
    backend = MilvusBackend(
        uri=server.uri,
        collection=f"t_{uuid.uuid4().hex[:12]}",
        timeout=TIMEOUT,
        retry_seconds=retry_seconds,
    )
    text = "数据库连接池耗尽"
    backend.replace(
        ["pool"],
        [
            IndexedPassage(
                passage_id="pool:0",
                case_pk="pool",
                kind="title",
                text=text,
                terms=search_terms(text),
                vector=unit(1),
            )
        ],
    )
    return backend


def search(backend: MilvusBackend) -> list[str]:
    """What a case search asks the backend, in the same order: lexical, then dense."""
    failures = []
    for call in (
        lambda: backend.lexical(search_terms("连接池"), 10),
        lambda: backend.dense(unit(1), 10),
    ):
        try:
            call()
        except BackendUnavailable as exc:
            failures.append(str(exc))
    return failures


def test_two_searches_while_the_server_hangs_wait_for_one_timeout_in_all(
    server: Server,
) -> None:
    backend = stored(server, retry_seconds=120)

    with server.hung():
        started = time.monotonic()
        first, second = search(backend), search(backend)
        waited = time.monotonic() - started

    # Four calls, each of which would wait the whole timeout: one did.
    assert waited < 2 * TIMEOUT
    assert len(first) == len(second) == 2
    assert len(set(first + second)) == 1
    assert "Milvus at http://127.0.0.1" in first[0]
    assert backend.failure == first[0]


def test_the_server_is_not_called_again_before_the_quiet_time_ends(server: Server) -> None:
    backend = stored(server, retry_seconds=120)
    with server.hung():
        failures = search(backend)

    # The server answers again, but the quiet time is not over: the call fails at once,
    # as the last one did.
    with pytest.raises(BackendUnavailable) as raised:
        backend.lexical(search_terms("连接池"), 10)

    assert str(raised.value) == failures[0]


def test_after_the_quiet_time_the_backend_finds_the_case_again(server: Server) -> None:
    backend = stored(server, retry_seconds=1)
    with server.hung():
        assert search(backend)

    def found() -> bool:
        try:
            return [pid for pid, _ in backend.lexical(search_terms("连接池"), 10)] == ["pool:0"]
        except BackendUnavailable:
            return False

    wait_for(found, timeout=30, what="the backend to find the case again")
    assert search(backend) == []
    assert backend.failure is None


def test_once_the_quiet_time_is_over_one_caller_at_a_time_tries_the_server(
    server: Server,
) -> None:
    backend = stored(server, retry_seconds=0)
    start = threading.Barrier(2)

    def waited_for_a_failure() -> float:
        start.wait()
        started = time.monotonic()
        with pytest.raises(BackendUnavailable):
            backend.lexical(search_terms("连接池"), 10)
        return time.monotonic() - started

    with server.hung():
        assert search(backend)
        with ThreadPoolExecutor(2) as pool:
            calls = [pool.submit(waited_for_a_failure) for _ in range(2)]
            waits = sorted(call.result() for call in calls)

    # One tried the server and waited for its timeout; the other did not wait for it.
    assert waits[0] < TIMEOUT / 2 < waits[1]


def test_a_request_failed_for_what_it_asks_does_not_stop_the_next_calls(
    server: Server,
) -> None:
    backend = stored(server, retry_seconds=120)

    # A fusion constant that makes the fusion divide by zero: the call fails at once.
    with pytest.raises(BackendUnavailable, match="failed the hybrid search"):
        backend.hybrid(search_terms("连接池"), unit(1), 10, rrf_k=-1)

    assert [pid for pid, _ in backend.lexical(search_terms("连接池"), 10)] == ["pool:0"]


@pytest.mark.django_db
def test_searches_while_the_server_hangs_answer_degraded_and_then_whole_again(
    server: Server, api, settings, monkeypatch
) -> None:
    from caselibrary.search_backends import base

    settings.CASE_SEARCH_BACKEND = "milvus"
    settings.MILVUS_URI = server.uri
    settings.MILVUS_COLLECTION = f"test_{uuid.uuid4().hex[:12]}"
    settings.MILVUS_TIMEOUT = TIMEOUT
    settings.MILVUS_RETRY_SECONDS = 3
    monkeypatch.setattr(base, "_instances", {})
    case = indexed_case()
    question = {"query": "下单报错 ERROR 1205 锁等待超时"}
    assert api.post("/api/cases/search", question, format="json").json()["degraded"] is False

    with server.hung():
        started = time.monotonic()
        answers = [api.post("/api/cases/search", question, format="json") for _ in range(2)]
        waited = time.monotonic() - started

    assert waited < 2 * TIMEOUT
    for answer in answers:
        assert answer.status_code == 200
        assert answer.json()["degraded"] is True
        assert answer.json()["hits"][0]["caseId"] == case.case_id

    def whole() -> bool:
        return api.post("/api/cases/search", question, format="json").json()["degraded"] is False

    wait_for(whole, timeout=30, what="a search answered with the index again")
    base.get_backend().drop()
