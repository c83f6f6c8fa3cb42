"""Case passages in a Milvus collection (CASE_SEARCH_BACKEND=milvus).

For libraries past one machine: a Milvus 2.5+ server (standalone or distributed) keeps
the passages, ranks them by BM25 (a BM25 function turns the terms into a sparse vector
on insert and on search) and by cosine over an HNSW index, and fuses both with
`hybrid_search` and reciprocal-rank fusion. docs/search-milvus.md says how to run it.

One collection per embedding model, made when missing, named MILVUS_COLLECTION + "_" + a
tag of the model and the terms' spelling (`case_passages_1a2b3c4d`):

    passage_id  VARCHAR primary key ("<case_id>:<n>")
    case_pk     VARCHAR, INVERTED index (a case's passages are deleted by it)
    kind, text  VARCHAR (text is what explain shows)
    terms       VARCHAR, analysed: the passage's lexical terms, each spelt as one
                alphanumeric word (see engine_terms)
    sparse      SPARSE_FLOAT_VECTOR, the BM25 function's output, BM25 index
    vector      FLOAT_VECTOR(EMBEDDING_DIM), HNSW, COSINE

A change of model (or dimension, or spelling) therefore starts an empty collection of its
own, which `manage.py reindex_cases` fills (it re-indexes the cases whose vectors are of
another model); the old one can be dropped once it is done. The collection also records
the three in its properties, and a process refuses a collection that says otherwise
(IndexStale: made by hand, or by another version of this code).

Every failure (server down, timeout, refused request) is raised as BackendUnavailable, so
the search service can answer without the index and say so; nothing here lets a raw
client error through.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings

from caselibrary.embedding import EMBEDDING_DIM, EMBEDDING_MODEL
from caselibrary.search_backends.base import IndexedPassage

if TYPE_CHECKING:
    import numpy
    from pymilvus import MilvusClient

logger = logging.getLogger(__name__)

# How the terms are spelt for the engine (see engine_terms). A change needs a rebuild,
# like a change of model.
TERMS_SPELLING = "blake2b64-hex"
_PROPERTY_MODEL = "caselibrary.embedding_model"
_PROPERTY_DIM = "caselibrary.embedding_dim"
_PROPERTY_TERMS = "caselibrary.terms_spelling"

# VARCHAR lengths are bytes. A passage is at most a screen of text (caselibrary/passages.py
# cuts them at 900 characters); these bounds only keep a freak passage from failing the
# whole batch.
_MAX_ID_BYTES = 128
_MAX_TEXT_BYTES = 65_535
_MAX_KIND_BYTES = 32
# Rows per upsert: well under the server's 64 MB message limit at 384 floats a row.
_BATCH = 500
# HNSW: the defaults Milvus's documentation suggests for a collection of this size.
_HNSW_BUILD = {"M": 16, "efConstruction": 200}


class BackendUnavailable(RuntimeError):
    """The Milvus server could not be reached or refused the request. The message says
    which and never carries the token."""


class IndexStale(BackendUnavailable):
    """The collection says it holds another model's vectors or another terms spelling than
    its name promises: rebuild it (`manage.py reindex_cases --all` after clear())."""


def engine_terms(terms: str) -> str:
    """`terms` (tokens joined by single spaces) as the engine indexes them: each token
    becomes `w` + 16 hex digits of its hash.

    Milvus's analysers split at punctuation, and Milvus Lite has no whitespace tokenizer,
    so a code such as `#ora-01555` or a Chinese word would not survive as one term. A
    hashed token is one alphanumeric word for every analyser, on every Milvus, so the
    engine ranks exactly the tokens `search_terms` made.
    """
    return " ".join(
        "w" + hashlib.blake2b(token.encode(), digest_size=8).hexdigest() for token in terms.split()
    )


def _index_properties() -> dict[str, str]:
    return {
        _PROPERTY_MODEL: EMBEDDING_MODEL,
        _PROPERTY_DIM: str(EMBEDDING_DIM),
        _PROPERTY_TERMS: TERMS_SPELLING,
    }


def index_tag() -> str:
    """Eight hex digits naming what the collection's vectors and terms are made with."""
    made_with = "|".join(_index_properties().values())
    return hashlib.blake2b(made_with.encode(), digest_size=4).hexdigest()


def _clip(text: str, max_bytes: int) -> str:
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode(errors="ignore")


def _clip_terms(words: str, max_bytes: int) -> str:
    # Whole words only: half a hash would be a different term.
    if len(words) <= max_bytes:
        return words
    return words[: words.rfind(" ", 0, max_bytes + 1)]


def _quoted(values: Sequence[str]) -> str:
    # A JSON string array is a valid Milvus expression list: quotes and backslashes are
    # escaped the same way.
    return json.dumps(list(values), ensure_ascii=False)


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

    def __repr__(self) -> str:  # the token stays out of every log line and traceback
        return f"<MilvusBackend {self._where} collection={self.collection}>"

    @property
    def _where(self) -> str:
        # The URI as shown in messages: scheme, host and port only (no user or password
        # someone may have written into it).
        parts = urlsplit(self.uri)
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"

    # --- SearchBackend --------------------------------------------------------------

    def replace(self, case_pks: Sequence[str], passages: Sequence[IndexedPassage]) -> None:
        case_pks = list(dict.fromkeys(str(pk) for pk in case_pks))
        strays = {p.case_pk for p in passages} - set(case_pks)
        if strays:
            raise ValueError(f"passages of cases not being replaced: {sorted(strays)[:3]}")
        if not case_pks:
            return
        rows = [self._row(passage) for passage in passages]
        with self._errors("replace"):
            client = self._ready_client()
            # Upsert first, then delete what the cases no longer have: a search never sees
            # a changed case missing.
            for start in range(0, len(rows), _BATCH):
                client.upsert(self.collection, rows[start : start + _BATCH], timeout=self.timeout)
            kept = [row["passage_id"] for row in rows]
            for start in range(0, len(case_pks), _BATCH):
                expr = f"case_pk in {_quoted(case_pks[start : start + _BATCH])}"
                if kept:
                    expr += f" and passage_id not in {_quoted(kept)}"
                client.delete(self.collection, filter=expr, timeout=self.timeout)

    def lexical(self, terms: str, limit: int) -> list[tuple[str, float]]:
        words = engine_terms(terms)
        if not words or limit <= 0:
            return []
        with self._errors("lexical search"):
            hits = self._ready_client().search(
                self.collection,
                data=[words],
                anns_field="sparse",
                limit=limit,
                search_params={"metric_type": "BM25"},
                consistency_level="Strong",
                timeout=self.timeout,
            )
        # A BM25 score is never negative. Milvus servers return it as is; Milvus Lite 3.2
        # returns it negated (its executors sort by distance, smallest first), in the
        # same order. The magnitude is the score on both.
        return [(str(hit.id), abs(float(hit.distance))) for hit in hits[0]]

    def dense(self, vector: numpy.ndarray, limit: int) -> list[tuple[str, float]]:
        if limit <= 0:
            return []
        with self._errors("dense search"):
            hits = self._ready_client().search(
                self.collection,
                data=[self._vector(vector)],
                anns_field="vector",
                limit=limit,
                search_params=self._dense_params(limit),
                consistency_level="Strong",
                timeout=self.timeout,
            )
        return [(str(hit.id), float(hit.distance)) for hit in hits[0]]

    def hybrid(
        self, terms: str, vector: numpy.ndarray, limit: int, rrf_k: int
    ) -> list[tuple[str, float]]:
        from pymilvus import AnnSearchRequest, RRFRanker

        if limit <= 0:
            return []
        words = engine_terms(terms)
        if not words:
            # Nothing to match lexically: the fusion of one ranking is that ranking.
            return [
                (passage_id, 1.0 / (rrf_k + rank))
                for rank, (passage_id, _cosine) in enumerate(self.dense(vector, limit), start=1)
            ]
        requests = [
            AnnSearchRequest(
                data=[words], anns_field="sparse", param={"metric_type": "BM25"}, limit=limit
            ),
            AnnSearchRequest(
                data=[self._vector(vector)],
                anns_field="vector",
                param=self._dense_params(limit),
                limit=limit,
            ),
        ]
        with self._errors("hybrid search"):
            hits = self._ready_client().hybrid_search(
                self.collection,
                reqs=requests,
                ranker=RRFRanker(rrf_k),
                limit=limit,
                consistency_level="Strong",
                timeout=self.timeout,
            )
        return [(str(hit.id), float(hit.distance)) for hit in hits[0]]

    def clear(self) -> None:
        """Drop the collection and make it anew for this process's model."""
        with self._errors("clear"):
            client = self._connected()
            if client.has_collection(self.collection, timeout=self.timeout):
                client.drop_collection(self.collection, timeout=self.timeout)
            self._create(client)
            self._checked = True

    def count(self) -> int:
        with self._errors("count"):
            rows = self._ready_client().query(
                self.collection,
                filter="",
                output_fields=["count(*)"],
                consistency_level="Strong",
                timeout=self.timeout,
            )
        return int(rows[0]["count(*)"]) if rows else 0

    def drop(self) -> None:
        """Drop this model's collection (the benchmark's, or a collection left behind)."""
        with self._errors("drop"):
            self._connected().drop_collection(self.collection, timeout=self.timeout)
            self._checked = False

    def flush(self) -> None:
        """Seal what was written into indexed segments now (after a bulk load: a server
        does it by size and time on its own; Milvus Lite searches unsealed rows slowly)."""
        with self._errors("flush"):
            self._ready_client().flush(self.collection, timeout=max(self.timeout, 600))

    # --- the collection ---------------------------------------------------------------

    def _connected(self) -> MilvusClient:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    try:
                        from pymilvus import MilvusClient
                    except ImportError as exc:
                        raise BackendUnavailable(
                            "CASE_SEARCH_BACKEND=milvus needs the Milvus client: "
                            "pip install '.[milvus]'"
                        ) from exc

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

    def _ready_client(self) -> MilvusClient:
        """The client, once the collection is known to exist and to match this process."""
        client = self._connected()
        if not self._checked:
            with self._lock:
                if not self._checked:
                    if client.has_collection(self.collection, timeout=self.timeout):
                        self._check(client)
                        self._load(client)
                    else:
                        self._create(client)
                    self._checked = True
        return client

    def _check(self, client: MilvusClient) -> None:
        found = client.describe_collection(self.collection, timeout=self.timeout)
        recorded = found.get("properties") or {}
        for key, expected in _index_properties().items():
            if recorded.get(key) != expected:
                raise IndexStale(
                    f"Milvus collection {self.collection!r} was built with {key}="
                    f"{recorded.get(key)!r}, this process uses {expected!r}: drop it and "
                    "rebuild it with `manage.py reindex_cases --all`."
                )

    def _load(self, client: MilvusClient) -> None:
        # A server loads its collections again after a restart; Milvus Lite does not, and
        # an operator may have released it.
        state = client.get_load_state(self.collection, timeout=self.timeout)["state"]
        if state.name != "Loaded":
            client.load_collection(self.collection, timeout=self.timeout)

    def _create(self, client: MilvusClient) -> None:
        from pymilvus import DataType, Function, FunctionType

        schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("passage_id", DataType.VARCHAR, is_primary=True, max_length=128)
        schema.add_field("case_pk", DataType.VARCHAR, max_length=64)
        schema.add_field("kind", DataType.VARCHAR, max_length=_MAX_KIND_BYTES)
        schema.add_field("text", DataType.VARCHAR, max_length=_MAX_TEXT_BYTES)
        schema.add_field(
            "terms",
            DataType.VARCHAR,
            max_length=_MAX_TEXT_BYTES,
            enable_analyzer=True,
            analyzer_params={"tokenizer": "standard"},
        )
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=EMBEDDING_DIM)
        schema.add_function(
            Function(
                name="terms_bm25",
                function_type=FunctionType.BM25,
                input_field_names=["terms"],
                output_field_names=["sparse"],
            )
        )
        indexes = client.prepare_index_params()
        indexes.add_index(field_name="case_pk", index_type="INVERTED")
        indexes.add_index(
            field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25"
        )
        indexes.add_index(
            field_name="vector", index_type="HNSW", metric_type="COSINE", params=_HNSW_BUILD
        )
        try:
            client.create_collection(
                self.collection,
                schema=schema,
                index_params=indexes,
                consistency_level="Strong",
                properties=_index_properties(),
                timeout=self.timeout,
            )
        except Exception:
            # Another process made it first: then it is there, and must match.
            if not client.has_collection(self.collection, timeout=self.timeout):
                raise
            self._check(client)
            return
        logger.info("Created Milvus collection %s for %s", self.collection, EMBEDDING_MODEL)

    # --- rows, parameters, errors -------------------------------------------------------

    @staticmethod
    def _vector(vector: numpy.ndarray) -> list[float]:
        values = [float(x) for x in vector]
        if len(values) != EMBEDDING_DIM:
            raise ValueError(f"vector has {len(values)} dimensions, expected {EMBEDDING_DIM}")
        return values

    def _row(self, passage: IndexedPassage) -> dict[str, object]:
        return {
            "passage_id": _clip(passage.passage_id, _MAX_ID_BYTES),
            "case_pk": str(passage.case_pk),
            "kind": _clip(passage.kind, _MAX_KIND_BYTES),
            "text": _clip(passage.text, _MAX_TEXT_BYTES),
            "terms": _clip_terms(engine_terms(passage.terms), _MAX_TEXT_BYTES),
            "vector": self._vector(passage.vector),
        }

    @staticmethod
    def _dense_params(limit: int) -> dict[str, object]:
        # HNSW's ef must be at least the number of hits asked for.
        return {"metric_type": "COSINE", "params": {"ef": max(limit, settings.MILVUS_SEARCH_EF)}}

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        from grpc import RpcError
        from pymilvus.exceptions import MilvusException

        try:
            yield
        except BackendUnavailable:
            raise
        except (MilvusException, RpcError, ConnectionError, TimeoutError, OSError) as exc:
            # The next call connects and checks the collection anew: the server may have
            # come back (the client does not always find it again by itself), or the
            # collection been dropped and made again.
            self._forget_client()
            if isinstance(exc, RpcError):
                message = f"{exc.code().name} {exc.details()}"
            else:
                message = getattr(exc, "message", None) or type(exc).__name__
            raise BackendUnavailable(
                f"Milvus at {self._where} failed the {what}: {message}"
            ) from exc
