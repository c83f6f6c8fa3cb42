"""The interface every case-search backend keeps.

A case is split into passages (its title, root cause, solution and runbook sections); a
backend stores them and answers three questions about them: which passages match these
terms (a BM25-family ranking from a real engine), which are nearest to this vector
(cosine, exact or approximate), and both fused by reciprocal rank. Everything above the
backend (codes and titles at L0, grouping passages into cases, the answer-or-NONE
decision) is the same for all of them: caselibrary/search_engine.py.

- `IndexedPassage.terms` is `caselibrary.search_text.search_terms(text)`: rjieba tokens
  joined by single spaces, lowercased, error codes and alert names kept whole.
- `IndexedPassage.vector` is a row of `caselibrary.embedding.embed_texts`.

`get_backend()` picks the backend named by settings.CASE_SEARCH_BACKEND: "database" (the
default: BM25 by SQLite FTS5 or, on MariaDB/MySQL, a term index in memory; vectors searched
in memory) or "milvus"
(caselibrary.search_backends.milvus.MilvusBackend).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Protocol

from django.conf import settings
from django.dispatch import Signal

if TYPE_CHECKING:
    import numpy


class BackendUnavailable(RuntimeError):
    """The backend's server could not be reached or refused the request. The search
    answers from what is left (lexical or dense alone, or the exact codes) and says it is
    degraded; the message never carries a credential."""


PASSAGE_KINDS = ("title", "description", "root_cause", "solution", "section")

BACKENDS = {
    "database": "caselibrary.search_backends.database.DatabaseBackend",
    "milvus": "caselibrary.search_backends.milvus.MilvusBackend",
}


@dataclass(frozen=True)
class IndexedPassage:
    passage_id: str  # f"{case_pk}:{n}" (n = the passage's number within its case)
    case_pk: str  # the case's primary key, case_library.case_id (a UUID string)
    kind: str  # one of PASSAGE_KINDS
    text: str  # the passage as stored and shown by explain
    terms: str  # search_terms(text)
    vector: numpy.ndarray  # float32, L2-normalised, shape (EMBEDDING_DIM,)


class SearchBackend(Protocol):
    name: str

    def replace(self, case_pks: Sequence[str], passages: Sequence[IndexedPassage]) -> None:
        """Drop every passage of `case_pks`, then store `passages` (all of them belong to
        `case_pks`; none for a case means the case is gone)."""

    def lexical(self, terms: str, limit: int) -> list[tuple[str, float]]:
        """(passage_id, score), best first: the engine's BM25-family ranking."""

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """Those of `terms` that some stored passage holds."""

    def dense(self, vector: numpy.ndarray, limit: int) -> list[tuple[str, float]]:
        """(passage_id, cosine), best first."""

    def hybrid(
        self, terms: str, vector: numpy.ndarray, limit: int, rrf_k: int
    ) -> list[tuple[str, float]]:
        """(passage_id, RRF score), best first: both rankings fused by reciprocal rank."""

    def clear(self) -> None:
        """Drop every passage."""

    def count(self) -> int:
        """How many passages are stored."""


def rrf_fuse(
    rankings: Sequence[Sequence[tuple[str, float]]],
    *,
    k: int,
    limit: int,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: each ranking gives an item weight / (k + rank), rank from 1."""
    fused: dict[str, float] = {}
    for n, ranking in enumerate(rankings):
        weight = weights[n] if weights else 1.0
        for rank, (item, _score) in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]


def get_backend(name: str | None = None) -> SearchBackend:
    """The configured backend, or the one named (one instance per process and name)."""
    name = name or settings.CASE_SEARCH_BACKEND
    if name not in _instances:
        try:
            dotted = BACKENDS[name]
        except KeyError:
            raise ValueError(f"Unknown CASE_SEARCH_BACKEND {name!r}") from None
        module, _, cls = dotted.rpartition(".")
        _instances[name] = getattr(import_module(module), cls)()
    return _instances[name]


_instances: dict[str, SearchBackend] = {}


def existing_backend(name: str) -> SearchBackend | None:
    """The process's backend of that name if get_backend() made it, without making it."""
    return _instances.get(name)


# Sent (`backend`, `found`) when a backend finds its collection lost as it checks it, on
# first use and after a failure: missing (then made anew by it) or holding no passage
# (`found` says which, for the log). The indexer's service listens (apps.py): when the
# database holds indexed cases, it queues them all for the indexer, which writes them back.
collection_lost = Signal()
