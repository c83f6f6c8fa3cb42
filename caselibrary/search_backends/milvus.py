"""Case passages in a Milvus collection (CASE_SEARCH_BACKEND=milvus).

For libraries past one machine: a Milvus 2.5+ server (standalone or distributed) keeps
the passages, ranks them by BM25 (a BM25 function turns the terms into a sparse vector
on insert and on search) and by cosine over an HNSW index, and fuses both with
`hybrid_search` and reciprocal-rank fusion. docs/search-milvus.md says how to run it.

One collection per embedding model, made when missing, named MILVUS_COLLECTION + "_" + a
tag of the model and the terms' spelling (`case_passages_1a2b3c4d`); its fields and
indexes are in milvus_collection.py.

A change of model (or dimension, or spelling) therefore starts an empty collection of its
own, which `manage.py reindex_cases` fills (it re-indexes the cases whose vectors are of
another model); the old one can be dropped once it is done. The collection also records
the three in its properties, and a process refuses a collection that says otherwise
(IndexStale: made by hand, or by another version of this code), or another owner.

Every failure (server down, timeout, refused request, whatever else the client raises)
is raised as BackendUnavailable, so the search service can answer without the index and
say so; nothing here lets a raw client error through, nor a credential (milvus_errors.py).

A collection lost under the service (dropped, a new or emptied server, a lost data
directory, a restore) is not a failure: the backend makes it anew and carries on, and
tells `collection_lost`, on which the indexer's service queues every case again.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, TypeVar

from django.conf import settings

from caselibrary.embedding import EMBEDDING_MODEL
from caselibrary.search_backends import milvus_collection as collection
from caselibrary.search_backends.base import BackendUnavailable as _Unavailable
from caselibrary.search_backends.base import IndexedPassage, collection_lost
from caselibrary.search_backends.milvus_breaker import Breaker, unreached
from caselibrary.search_backends.milvus_collection import engine_terms, index_tag
from caselibrary.search_backends.milvus_errors import raised_by_client, redacted, server_address

if TYPE_CHECKING:
    import numpy
    from pymilvus import MilvusClient

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


# Rows per upsert: well under the server's 64 MB message limit at 512 floats a row; cases
# per delete expression.
_BATCH = 500
_DELETE_CASES = 100


class BackendUnavailable(_Unavailable):
    """The Milvus server could not be reached or refused the request. The message says
    which and never carries the token."""


class IndexStale(BackendUnavailable):
    """The collection belongs to another installation (left alone), or says it holds
    another model's vectors or terms spelling than its name promises: rebuild it then."""


def _quiet_client_logs() -> None:
    # pymilvus gives its loggers handlers of its own when imported, and logs every failed
    # call with a traceback at ERROR. The backend raises one clear error instead, which the
    # search reports: the client's loggers go back to the project's logging, critical only.
    for name in ("pymilvus", "pymilvus.milvus_client", "pymilvus.bulk_writer"):
        client_logger = logging.getLogger(name)
        client_logger.handlers.clear()
        client_logger.propagate = True
        client_logger.setLevel(logging.NOTSET)
    logging.getLogger("pymilvus").setLevel(logging.CRITICAL)


class MilvusBackend:
    """The SearchBackend interface over one Milvus collection."""

    name = "milvus"

    def __init__(
        self,
        *,
        uri: str | None = None,
        token: str | None = None,
        collection: str | None = None,
        timeout: float | None = None,
        retry_seconds: float | None = None,
    ) -> None:
        self.uri = uri if uri is not None else settings.MILVUS_URI
        self._token = token if token is not None else settings.MILVUS_TOKEN
        self.collection_prefix = (
            collection if collection is not None else settings.MILVUS_COLLECTION
        )
        self.collection = f"{self.collection_prefix}_{index_tag()}"
        self.timeout = timeout if timeout is not None else settings.MILVUS_TIMEOUT
        self._client: MilvusClient | None = None
        self._checked = False
        self._lock = threading.Lock()
        # Why the last call failed (redacted), None once one succeeds: /readyz reads it.
        self.failure: str | None = None
        # While the server is unavailable, calls fail at once for a while (milvus_breaker).
        self._breaker = Breaker(
            retry_seconds if retry_seconds is not None else settings.MILVUS_RETRY_SECONDS
        )

    def __repr__(self) -> str:  # the token stays out of every log line and traceback
        return f"<MilvusBackend {self._where} collection={self.collection}>"

    @property
    def _where(self) -> str:
        # The URI as shown in messages: scheme, host and port only (no user or password
        # someone may have written into it).
        return server_address(self.uri)

    # --- SearchBackend --------------------------------------------------------------

    def replace(self, case_pks: Sequence[str], passages: Sequence[IndexedPassage]) -> None:
        case_pks = list(dict.fromkeys(str(pk) for pk in case_pks))
        strays = {p.case_pk for p in passages} - set(case_pks)
        if strays:
            raise ValueError(f"passages of cases not being replaced: {sorted(strays)[:3]}")
        if not case_pks:
            return
        rows = [collection.row(passage) for passage in passages]

        def write(client: MilvusClient) -> None:
            # Upsert first, then delete what the cases no longer have: a search never sees
            # a changed case missing. Both can be done again: a collection lost half-way
            # is written whole the second time.
            for start in range(0, len(rows), _BATCH):
                client.upsert(self.collection, rows[start : start + _BATCH], timeout=self.timeout)
            for start in range(0, len(case_pks), _DELETE_CASES):
                cases = case_pks[start : start + _DELETE_CASES]
                kept = [row["passage_id"] for row in rows if row["case_pk"] in set(cases)]
                expr = f"case_pk in {collection.quoted(cases)}"
                if kept:
                    expr += f" and passage_id not in {collection.quoted(kept)}"
                client.delete(self.collection, filter=expr, timeout=self.timeout)

        self._call("replace", write)

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """Those of `terms` that some stored passage holds (one BM25 search each)."""
        return {term for term in dict.fromkeys(terms) if self.lexical(term, 1)}

    def lexical(self, terms: str, limit: int) -> list[tuple[str, float]]:
        words = engine_terms(terms)
        if not words or limit <= 0:
            return []
        hits = self._call(
            "lexical search",
            lambda client: client.search(
                self.collection,
                data=[words],
                anns_field="sparse",
                limit=limit,
                search_params={"metric_type": "BM25"},
                consistency_level="Strong",
                timeout=self.timeout,
            ),
        )
        # A BM25 score is never negative. Milvus servers return it as is; Milvus Lite 3.2
        # returns it negated (its executors sort by distance, smallest first), in the
        # same order. The magnitude is the score on both.
        return [(str(hit.id), abs(float(hit.distance))) for hit in hits[0]]

    def dense(self, vector: numpy.ndarray, limit: int) -> list[tuple[str, float]]:
        if limit <= 0:
            return []
        values = collection.vector_values(vector)
        hits = self._call(
            "dense search",
            lambda client: client.search(
                self.collection,
                data=[values],
                anns_field="vector",
                limit=limit,
                search_params=self._dense_params(limit),
                consistency_level="Strong",
                timeout=self.timeout,
            ),
        )
        return [(str(hit.id), float(hit.distance)) for hit in hits[0]]

    def hybrid(
        self, terms: str, vector: numpy.ndarray, limit: int, rrf_k: int
    ) -> list[tuple[str, float]]:
        if limit <= 0:
            return []
        words = engine_terms(terms)
        if not words:
            # Nothing to match lexically: the fusion of one ranking is that ranking.
            return [
                (passage_id, 1.0 / (rrf_k + rank))
                for rank, (passage_id, _cosine) in enumerate(self.dense(vector, limit), start=1)
            ]
        values = collection.vector_values(vector)

        def search(client: MilvusClient) -> list:
            from pymilvus import AnnSearchRequest, RRFRanker  # installed: _errors checked

            requests = [
                AnnSearchRequest(
                    data=[words], anns_field="sparse", param={"metric_type": "BM25"}, limit=limit
                ),
                AnnSearchRequest(
                    data=[values],
                    anns_field="vector",
                    param=self._dense_params(limit),
                    limit=limit,
                ),
            ]
            return client.hybrid_search(
                self.collection,
                reqs=requests,
                ranker=RRFRanker(rrf_k),
                limit=limit,
                consistency_level="Strong",
                timeout=self.timeout,
            )

        hits = self._call("hybrid search", search)
        return [(str(hit.id), float(hit.distance)) for hit in hits[0]]

    def clear(self) -> None:
        """Drop the collection and make it anew for this process's model."""
        with self._errors("clear"):
            client = self._connected()
            if client.has_collection(self.collection, timeout=self.timeout):
                self._check(client, owner_only=True)
                client.drop_collection(self.collection, timeout=self.timeout)
            self._create(client)
            self._checked = True

    def count(self) -> int:
        return self._call(
            "count",
            lambda client: collection.row_count(client, self.collection, timeout=self.timeout),
        )

    def connect(self) -> None:
        """Connect and check the collection (made when missing) now, unless done since the
        last failure: the indexer does it before a pass embeds or writes anything."""
        with self._errors("connect"):
            self._ready_client()

    def drop(self) -> None:
        """Drop this model's collection (the benchmark's, or a collection left behind)."""
        with self._errors("drop"):
            self._connected().drop_collection(self.collection, timeout=self.timeout)
            self._checked = False

    def flush(self) -> None:
        """Seal what was written into indexed segments now (after a bulk load: a server
        does it by size and time on its own; Milvus Lite searches unsealed rows slowly)."""
        self._call(
            "flush", lambda client: client.flush(self.collection, timeout=max(self.timeout, 600))
        )

    # --- the collection ---------------------------------------------------------------

    def _connected(self) -> MilvusClient:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    from pymilvus import MilvusClient  # installed: _errors checked

                    _quiet_client_logs()

                    options: dict[str, object] = {"uri": self.uri, "timeout": self.timeout}
                    if self._token:
                        options["token"] = self._token
                    if settings.MILVUS_DB_NAME:
                        options["db_name"] = settings.MILVUS_DB_NAME
                    if settings.MILVUS_CA_CERT:
                        options["server_pem_path"] = settings.MILVUS_CA_CERT
                    self._client = MilvusClient(**options)
        return self._client

    def _forget_client(self) -> None:
        with self._lock:
            client, self._client, self._checked = self._client, None, False
        if client is not None:
            with suppress(Exception):
                client.close()

    def _call(self, what: str, call: Callable[[MilvusClient], _T]) -> _T:
        """`call` with the client, once the collection is ready. Should the collection
        have gone since it was checked, it is checked again (made anew) and `call` made
        once more: the service goes on, on the empty collection, while it is refilled."""
        with self._errors(what):
            client = self._ready_client()
            try:
                return call(client)
            except Exception as exc:
                if not _collection_missing(exc):
                    raise
            with self._lock:
                self._checked = False
            return call(self._ready_client())

    def _ready_client(self) -> MilvusClient:
        """The client, once the collection is known to exist and to match this process."""
        client = self._connected()
        found = None
        if not self._checked:
            with self._lock:
                if not self._checked:
                    found = self._prepare(client)
                    self._checked = True
        if found:
            # Outside the lock: a listener may index, through this backend, at once.
            self._tell_lost(found)
        return client

    def _prepare(self, client: MilvusClient) -> str | None:
        """Make sure of the collection; how it was found lost, if it was."""
        if not client.has_collection(self.collection, timeout=self.timeout):
            if self._create(client):
                return f"Milvus collection {self.collection} was missing and was made anew"
            return None  # made by another process meanwhile, which tells
        self._check(client)
        collection.ensure_loaded(client, self.collection, timeout=self.timeout)
        if collection.row_count(client, self.collection, timeout=self.timeout) == 0:
            return f"Milvus collection {self.collection} holds no passages"
        return None

    def _tell_lost(self, found: str) -> None:
        try:
            collection_lost.send(sender=MilvusBackend, backend=self, found=found)
        except Exception as exc:  # the search or the write that found it goes on
            logger.warning("%s; its cases could not be queued again: %s", found, exc)

    def _check(self, client: MilvusClient, *, owner_only: bool = False) -> None:
        why = collection.refusal(client, self.collection, self.timeout, owner_only=owner_only)
        if why and why != self.failure:  # said once, not at every search refused
            logger.error("%s", why)
        if why:
            raise IndexStale(why)

    def _create(self, client: MilvusClient) -> bool:
        """Make the collection; whether this process made it."""
        try:
            collection.create(client, self.collection, timeout=self.timeout)
        except Exception:
            # Another process made it first: then it is there, and must match.
            if not client.has_collection(self.collection, timeout=self.timeout):
                raise
            self._check(client)
            return False
        logger.info("Created Milvus collection %s for %s", self.collection, EMBEDDING_MODEL)
        return True

    # --- parameters, errors -------------------------------------------------------------

    @staticmethod
    def _dense_params(limit: int) -> dict[str, object]:
        # HNSW's ef must be at least the number of hits asked for.
        return {"metric_type": "COSINE", "params": {"ef": max(limit, settings.MILVUS_SEARCH_EF)}}

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            from grpc import RpcError
            from pymilvus.exceptions import MilvusException
        except ImportError as exc:
            raise self._failed(
                "CASE_SEARCH_BACKEND=milvus needs the Milvus client: pip install '.[milvus]'", exc
            ) from None
        except Exception as exc:
            # pymilvus reads MILVUS_URI from the environment as it is imported, and raises
            # with the whole URI when it cannot read it (a value the settings did not judge:
            # another search backend was configured when they were read).
            raise self._failed(f"the Milvus client cannot be imported: {_said(exc)}", exc) from None
        refusal = self._breaker.refusal()
        if refusal is not None:  # the server failed a call a moment ago: not called again yet
            raise BackendUnavailable(refusal)
        try:
            yield
        except BackendUnavailable as exc:
            self.failure = str(exc)
            self._breaker.answered()  # IndexStale: the server answered
            raise
        except Exception as exc:
            # Whatever the client raises fails the call (a refused request, a ValueError of
            # its own reading of the URI); an error of this module's code goes on up.
            client_error = (MilvusException, RpcError, ConnectionError, TimeoutError, OSError)
            if not (isinstance(exc, client_error) or raised_by_client(exc)):
                raise
            error = self._failed(f"Milvus at {self._where} failed the {what}: {_said(exc)}", exc)
            if unreached(exc):
                self._breaker.unreachable(str(error))
            else:
                self._breaker.answered()
            raise error from error.__cause__
        else:
            self.failure = None
            self._breaker.answered()
        finally:
            self._breaker.released()

    def _failed(self, message: str, exc: Exception) -> BackendUnavailable:
        """The error to raise for `exc`, noted as this backend's failure. The next call
        connects and checks the collection anew: the server may have come back (the client
        does not always find it again by itself), or the collection been dropped and made
        again. Neither the message nor the error's cause keeps a credential."""
        self._forget_client()
        # pymilvus may also show the URI it read from the environment on import.
        uris = (self.uri, os.environ.get("MILVUS_URI", ""))
        message = redacted(message, uris=uris, token=self._token)
        error = BackendUnavailable(message)
        # Chained to the client's error unless that shows a credential.
        if redacted(str(exc), uris=uris, token=self._token) == str(exc):
            error.__cause__ = exc
        self.failure = message
        return error


def _said(exc: Exception) -> str:
    """What the client's error says (a gRPC one: its status and details)."""
    # A grpc.RpcError has code() and details(); a MilvusException's code is a number.
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):
        return f"{code().name} {details()}"
    return getattr(exc, "message", None) or str(exc) or type(exc).__name__


def backend_failure() -> str | None:
    """Why this process's Milvus backend failed its last call, or None: it has made none
    yet, or the last one succeeded."""
    from caselibrary.search_backends.base import existing_backend

    backend = existing_backend("milvus")
    return getattr(backend, "failure", None)


def _collection_missing(exc: Exception) -> bool:
    from pymilvus.exceptions import ErrorCode, MilvusException

    return isinstance(exc, MilvusException) and exc.code == ErrorCode.COLLECTION_NOT_FOUND
