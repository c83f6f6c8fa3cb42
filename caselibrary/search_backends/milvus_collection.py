"""The Milvus collection of case passages: its schema and indexes, what it records about
how it was made, and how a passage becomes one of its rows (caselibrary/search_backends/
milvus.py uses it; docs/search-milvus.md shows it to operators).

    passage_id  VARCHAR primary key ("<case_id>:<n>")
    case_pk     VARCHAR, INVERTED index (a case's passages are deleted by it)
    kind, text  VARCHAR (text is what explain shows)
    terms       VARCHAR, analysed: the passage's lexical terms, each spelt as one
                alphanumeric word (see engine_terms)
    sparse      SPARSE_FLOAT_VECTOR, the BM25 function's output, BM25 index
    vector      FLOAT_VECTOR(EMBEDDING_DIM), HNSW, COSINE

Its properties record the model, dimension and terms spelling (index_properties) and the
installation that owns it (owner): the database's id of the installation and the queue's
name (Q_CLUSTER_NAME), so that two environments given one server and one MILVUS_COLLECTION
do not write into each other's collection.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings

from caselibrary.embedding import EMBEDDING_DIM, EMBEDDING_MODEL
from caselibrary.search_backends.base import IndexedPassage

if TYPE_CHECKING:
    import numpy
    from pymilvus import MilvusClient

# How the terms are spelt for the engine (see engine_terms). A change needs a rebuild,
# like a change of model.
TERMS_SPELLING = "blake2b64-hex"
_PROPERTY_MODEL = "caselibrary.embedding_model"
_PROPERTY_DIM = "caselibrary.embedding_dim"
_PROPERTY_TERMS = "caselibrary.terms_spelling"
_PROPERTY_OWNER = "caselibrary.owner"

logger = logging.getLogger(__name__)

# VARCHAR lengths are bytes. A passage is at most a screen of text (caselibrary/passages.py
# cuts them at 900 characters); these bounds only keep a freak passage from failing the
# whole batch.
_MAX_ID_BYTES = 128
_MAX_TEXT_BYTES = 65_535
_MAX_KIND_BYTES = 32
# HNSW: the defaults Milvus's documentation suggests for a collection of this size.
_HNSW_BUILD = {"M": 16, "efConstruction": 200}


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


def index_properties() -> dict[str, str]:
    """What the collection records about how its vectors and terms were made."""
    return {
        _PROPERTY_MODEL: EMBEDDING_MODEL,
        _PROPERTY_DIM: str(EMBEDDING_DIM),
        _PROPERTY_TERMS: TERMS_SPELLING,
    }


def index_tag() -> str:
    """Eight hex digits naming what the collection's vectors and terms are made with."""
    made_with = "|".join(index_properties().values())
    return hashlib.blake2b(made_with.encode(), digest_size=4).hexdigest()


def installation() -> str:
    """This installation's id: random, made once (by whichever process asks first) and
    kept in the database, so that every process of the installation tells the same. Read
    when the collection is checked (once a connection), not kept: a database restored or
    copied under a running process is told."""
    from caselibrary.models import CaseIndexState

    rows = CaseIndexState.objects.filter(id=1).values_list("installation", flat=True)
    made = rows.first()
    if not made:
        CaseIndexState.objects.get_or_create(id=1)
        rows.filter(installation="").update(installation=uuid.uuid4().hex)
        made = rows.get()
    return made


def owner() -> str | None:
    """The owner a collection this process uses records: the queue's name and the
    installation's id (a database copied from production into staging keeps the id; the
    queue's names still differ). None when the database cannot be read: not checked then."""
    try:
        made_by = installation()
    except Exception as exc:
        logger.warning("The Milvus collection's owner is not checked: %s", exc)
        return None
    return f"{settings.Q_CLUSTER['name']}:{made_by}"


def refusal(client: MilvusClient, name: str, timeout: float, *, owner_only: bool) -> str | None:
    """Why this process must not use the collection `name`, if it must not: it belongs to
    another installation, or (unless `owner_only`) it records another model, dimension or
    terms spelling. A collection that records no owner (an earlier release made it) is
    claimed: it records this installation from then on."""
    recorded = client.describe_collection(name, timeout=timeout).get("properties") or {}
    ours, theirs = owner(), recorded.get(_PROPERTY_OWNER)
    if ours is not None and not theirs:
        client.alter_collection_properties(name, {_PROPERTY_OWNER: ours}, timeout=timeout)
        logger.info("Milvus collection %s is recorded as this installation's from now on", name)
    elif ours is not None and theirs != ours:
        return (
            f"Milvus collection {name!r} belongs to another installation (another database "
            "or Q_CLUSTER_NAME made it): it is left alone. Give this installation a "
            "MILVUS_COLLECTION (or MILVUS_DB_NAME) of its own."
        )
    for key, expected in index_properties().items():
        if not owner_only and recorded.get(key) != expected:
            return (
                f"Milvus collection {name!r} was built with {key}={recorded.get(key)!r}, this "
                f"process uses {expected!r}: drop it and rebuild it with "
                "`manage.py reindex_cases --all`."
            )
    return None


def ensure_loaded(client: MilvusClient, name: str, *, timeout: float) -> None:
    # A server loads its collections again after a restart; Milvus Lite does not, and an
    # operator may have released it.
    if client.get_load_state(name, timeout=timeout)["state"].name != "Loaded":
        client.load_collection(name, timeout=timeout)


def row_count(client: MilvusClient, name: str, *, timeout: float) -> int:
    """The passages the collection holds, counted by the server (deletes included)."""
    rows = client.query(
        name,
        filter="",
        output_fields=["count(*)"],
        consistency_level="Strong",
        timeout=timeout,
    )
    return int(rows[0]["count(*)"]) if rows else 0


def create(client: MilvusClient, name: str, *, timeout: float) -> None:
    """Make the collection with its indexes, loaded, recording index_properties() and
    this installation as its owner."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("passage_id", DataType.VARCHAR, is_primary=True, max_length=_MAX_ID_BYTES)
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
    indexes.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    indexes.add_index(
        field_name="vector", index_type="HNSW", metric_type="COSINE", params=_HNSW_BUILD
    )
    client.create_collection(
        name,
        schema=schema,
        index_params=indexes,
        consistency_level="Strong",
        properties={**index_properties(), **_owned_by(owner())},
        timeout=timeout,
    )


def _owned_by(made_by: str | None) -> dict[str, str]:
    return {_PROPERTY_OWNER: made_by} if made_by else {}


def vector_values(vector: numpy.ndarray) -> list[float]:
    values = [float(x) for x in vector]
    if len(values) != EMBEDDING_DIM:
        raise ValueError(f"vector has {len(values)} dimensions, expected {EMBEDDING_DIM}")
    return values


def row(passage: IndexedPassage) -> dict[str, object]:
    """The passage as a row of the collection."""
    return {
        "passage_id": _clip(passage.passage_id, _MAX_ID_BYTES),
        "case_pk": str(passage.case_pk),
        "kind": _clip(passage.kind, _MAX_KIND_BYTES),
        "text": _clip(passage.text, _MAX_TEXT_BYTES),
        "terms": _clip_words(engine_terms(passage.terms), _MAX_TEXT_BYTES),
        "vector": vector_values(passage.vector),
    }


def quoted(values: Sequence[str]) -> str:
    """A list of strings for a filter expression (`case_pk in [...]`): a JSON string array
    is a valid Milvus expression list, quotes and backslashes escaped the same way."""
    return json.dumps(list(values), ensure_ascii=False)


def _clip(text: str, max_bytes: int) -> str:
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode(errors="ignore")


def _clip_words(words: str, max_bytes: int) -> str:
    # Whole words only: half a hash would be a different term.
    if len(words) <= max_bytes:
        return words
    return words[: words.rfind(" ", 0, max_bytes + 1)]
