"""The default backend: passages in this database, no other server.

Lexical ranking by BM25 over the passages' search terms (search_text.search_terms, which
cuts Chinese and keeps codes whole): on SQLite by its FTS5 engine's bm25() over
`case_passage.lexemes` (each term stored as a fixed-length key of letters and digits,
`lexeme`, so the engine's own tokenizer neither drops nor splits one); on MariaDB/MySQL by
an index of `case_passage.terms` held in memory (term_index.py), because InnoDB's
FULLTEXT query reads every row holding any of the question's terms at about 30 us a row
(p50 57-68 ms over 28,000 passages, 2.3 s over 207,000) and ranks by a TF-IDF variant.

Dense ranking exact, in memory: each serving process holds every passage vector of the
current embedding model in one matrix (a row per passage, int8 with a scale per row) and
keeps it, and on MariaDB/MySQL the term index, current by the indexer's log
(case_index_log): every CASE_SEARCH_REFRESH_SECONDS at most, the cases logged past the
last entry it applied are reloaded from case_passage.
"""

from __future__ import annotations

import gc
import hashlib
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from caselibrary.embedding import EMBEDDING_DIM, EMBEDDING_MODEL
from caselibrary.models import CaseIndexLog, CasePassage
from caselibrary.search_backends.base import IndexedPassage, rrf_fuse
from caselibrary.search_backends.term_index import TermIndex

LOAD_BATCH = 5_000
# The common terms of the library (common_terms): estimated on the latest passages,
# trusted for ten minutes (shares move slowly, and a stale one only decides whether a
# glossary word joins a full-text query).
COMMON_TERMS_SECONDS = 600
COMMON_TERMS_FROM = 1_000
COMMON_TERMS_SAMPLE = 2_000
# A process that has not refreshed for this long reloads everything: the log it would
# read may have been pruned meanwhile (caselibrary/services/index.py keeps an hour).
FULL_RELOAD_AFTER_SECONDS = 1800
# The term index is loaded afresh once this share of its rows are passages since dropped.
TERMS_DEAD_SHARE = 0.25


def lexeme(term: str) -> str:
    """A term as the full-text engines index it: "t" and 15 hex digits."""
    return "t" + hashlib.blake2b(term.encode(), digest_size=8).hexdigest()[:15]


def lexemes(terms: str) -> str:
    return " ".join(lexeme(term) for term in terms.split())


def passage_id(case_id: str, number: int) -> str:
    return f"{case_id}:{number}"


class VectorMatrix:
    """Every passage vector of one model, by passage id, searched exactly.

    A row is held as int8 with its own scale (the largest component maps to 127): a
    quarter of float32's memory, which is what lets a web worker hold a large library
    (at 100,000 cases, 207,000 passages: 106 MB instead of 424 MB; the worker peaked at
    714 MB with float32 rows). Scores stay within about 0.001 of the float32 cosine.
    The scan converts a block of rows at a time to float32 for BLAS, and is faster than
    the float32 scan it replaces, which was bound by memory reads (207,000 passages:
    34 ms against 42 ms, one core).
    """

    BLOCK = 2048
    SCORES_HELD = 4_000_000  # 16 MB of float32 scores

    def __init__(self, dim: int, capacity: int = 0) -> None:
        # A full load knows how many rows come and allocates them once: growing the
        # matrix on the way would hold the old and the new one at once.
        self.dim = dim
        self.matrix = np.zeros((capacity, dim), dtype=np.int8)
        self.scales = np.zeros(capacity, dtype=np.float32)
        self.live = np.zeros(capacity, dtype=bool)
        # Each row's case (the one string object per case) and passage number: a passage
        # id string per row would cost 87 bytes a row (17 MB at 207,000 passages).
        self.cases: list[str | None] = []
        self.numbers = np.zeros(capacity, dtype=np.int32)
        self.rows: dict[str, list[int]] = {}  # case id -> its rows
        self.free: list[int] = []

    def __len__(self) -> int:
        return int(self.live.sum())

    def drop(self, case_id: str) -> None:
        for row in self.rows.pop(case_id, []):
            self.live[row] = False
            self.cases[row] = None
            self.free.append(row)

    def add(self, case_id: str, numbers: list[int], vectors: np.ndarray) -> None:
        rows = self.rows.setdefault(case_id, [])
        vectors = np.asarray(vectors, dtype=np.float32)
        peaks = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, np.float32)
        scales = np.where(peaks > 0, peaks / 127, 1.0).astype(np.float32)
        quantised = np.rint(vectors / scales[:, None]).astype(np.int8)
        for number, row_values, scale in zip(numbers, quantised, scales, strict=True):
            row = self.free.pop() if self.free else self._grow()
            self.matrix[row] = row_values
            self.scales[row] = scale
            self.live[row] = True
            self.cases[row] = case_id
            self.numbers[row] = number
            rows.append(row)

    def _grow(self) -> int:
        used = len(self.cases)
        if used == len(self.matrix):
            capacity = max(1024, used * 3 // 2)
            matrix = np.zeros((capacity, self.dim), dtype=np.int8)
            matrix[:used] = self.matrix[:used]
            scales = np.zeros(capacity, dtype=np.float32)
            scales[:used] = self.scales[:used]
            numbers = np.zeros(capacity, dtype=np.int32)
            numbers[:used] = self.numbers[:used]
            live = np.zeros(capacity, dtype=bool)
            live[:used] = self.live[:used]
            self.matrix, self.scales, self.numbers, self.live = matrix, scales, numbers, live
        self.cases.append(None)
        return used

    def nearest(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        return self.nearest_each(np.asarray(vector, dtype=np.float32)[None, :], limit)[0]

    def nearest_each(self, vectors: np.ndarray, limit: int) -> list[list[tuple[str, float]]]:
        """`nearest` for each of `vectors` (one per row), in one scan of the matrix: each
        block of rows is converted once and multiplied with all of them. The indexer
        looks for each new passage's neighbours: one scan per passage made it spend 89 %
        of its time there, and slow down as the library grew."""
        vectors = np.asarray(vectors, dtype=np.float32)
        used = len(self.cases)
        if not used or not len(vectors):
            return [[] for _ in vectors]
        found: list[list[tuple[str, float]]] = []
        # The scores of a chunk of queries at once: at most SCORES_HELD floats.
        chunk = max(1, self.SCORES_HELD // used)
        block = np.empty((min(self.BLOCK, used), self.dim), dtype=np.float32)
        for first in range(0, len(vectors), chunk):
            queries = vectors[first : first + chunk]
            scores = np.empty((used, len(queries)), dtype=np.float32)
            for start in range(0, used, self.BLOCK):
                rows = self.matrix[start : min(start + self.BLOCK, used)]
                converted = block[: len(rows)]
                np.copyto(converted, rows, casting="unsafe")
                np.dot(converted, queries.T, out=scores[start : start + len(rows)])
            scores *= self.scales[:used, None]
            scores[~self.live[:used]] = -np.inf
            found += [self._best(scores[:, column], limit) for column in range(len(queries))]
        return found

    def _best(self, scores: np.ndarray, limit: int) -> list[tuple[str, float]]:
        limit = min(limit, len(scores))
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [
            (passage_id(self.cases[row], int(self.numbers[row])), float(scores[row]))
            for row in top
            if self.live[row]
        ]


class DatabaseBackend:
    name = "database"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._vectors: VectorMatrix | None = None
        self._terms: TermIndex | None = None
        self._seq = 0
        self._checked = 0.0

    # --- writing -----------------------------------------------------------------

    def replace(self, case_pks: Sequence[str], passages: Sequence[IndexedPassage]) -> None:
        """Store `passages` as the whole of these cases' passages. A passage whose text,
        terms and model are what is stored already keeps its row: a case is indexed again
        after any change to its row (its category edited, say), and on MariaDB
        a deleted row stays in the FULLTEXT index, filtered out of every query that finds
        it, until the table is rebuilt (6,000 of them made each full-text query 1.6 ms
        slower)."""
        wanted = {(p.case_pk, int(p.passage_id.rpartition(":")[2])): p for p in passages}
        with transaction.atomic():
            stored = CasePassage.objects.filter(case_id__in=list(case_pks)).values_list(
                "id", "case_id", "number", "kind", "text", "terms", "model"
            )
            kept, stale = set(), []
            for row_id, case_id, number, kind, text, terms, model in stored:
                p = wanted.get((case_id, number))
                same = p is not None and (kind, text, terms) == (p.kind, p.text, p.terms)
                if same and model == EMBEDDING_MODEL:
                    kept.add((case_id, number))
                else:
                    stale.append(row_id)
            CasePassage.objects.filter(id__in=stale).delete()
            CasePassage.objects.bulk_create(
                CasePassage(
                    case_id=p.case_pk,
                    number=number,
                    kind=p.kind,
                    text=p.text,
                    terms=p.terms,
                    lexemes=lexemes(p.terms),
                    vector=np.asarray(p.vector, dtype="<f4").tobytes(),
                    model=EMBEDDING_MODEL,
                )
                for (_, number), p in wanted.items()
                if (p.case_pk, number) not in kept
            )

    def clear(self) -> None:
        CasePassage.objects.all().delete()
        self.forget()

    def count(self) -> int:
        return CasePassage.objects.count()

    # --- reading -----------------------------------------------------------------

    def lexical(self, terms: str, limit: int) -> list[tuple[str, float]]:
        if not _full_text_in_database():
            return self.term_index().search(terms.split(), limit)
        # SQL, not the ORM: Django has no full-text query for SQLite's FTS5 (a virtual
        # table). Parameterised.
        keys = list(dict.fromkeys(lexemes(terms).split()))
        if not keys:
            return []
        with connection.cursor() as cursor:
            # bm25() is lower for better matches: its negation, best first.
            cursor.execute(
                "SELECT p.case_id, p.number, -bm25(case_passage_fts) AS score"
                " FROM case_passage_fts JOIN case_passage p ON p.id = case_passage_fts.rowid"
                " WHERE case_passage_fts MATCH %s ORDER BY score DESC, p.id LIMIT %s",
                [" OR ".join(keys), limit],
            )
            return [(passage_id(c, n), float(s)) for c, n, s in cursor.fetchall()]

    def common_terms(self, share: float) -> frozenset[str]:
        """The terms held by more than `share` of the stored passages, estimated on the
        latest COMMON_TERMS_SAMPLE of them (one read of their terms, no full-text query:
        counting a common word's passages costs what leaving it out saves). None while
        fewer than COMMON_TERMS_FROM passages are stored: there no term costs a query
        much. Kept COMMON_TERMS_SECONDS in Django's cache."""
        key = f"case-common-terms:{share}"
        common = cache.get(key)
        if common is None:
            sample = list(
                CasePassage.objects.order_by("-id").values_list("terms", flat=True)[
                    :COMMON_TERMS_SAMPLE
                ]
            )
            common = frozenset()
            if len(sample) >= COMMON_TERMS_FROM:
                held = Counter(term for terms in sample for term in set(terms.split()))
                limit = share * len(sample)
                common = frozenset(term for term, n in held.items() if n > limit)
            cache.set(key, common, COMMON_TERMS_SECONDS)
        return common

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """Those of `terms` that some stored passage holds (one index lookup each)."""
        if not _full_text_in_database():
            held = self.term_index()
            return {term for term in dict.fromkeys(terms) if held.holds(term)}
        return {term for term in dict.fromkeys(terms) if self.lexical(term, 1)}

    def dense(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        return self.vectors().nearest(np.asarray(vector, dtype=np.float32), limit)

    def dense_each(
        self, vectors: Sequence[np.ndarray], limit: int
    ) -> list[list[tuple[str, float]]]:
        """`dense` for each of `vectors`, in one scan of the held vectors."""
        if not len(vectors):
            return []
        return self.vectors().nearest_each(np.asarray(vectors), limit)

    def hybrid(
        self, terms: str, vector: np.ndarray, limit: int, rrf_k: int
    ) -> list[tuple[str, float]]:
        depth = max(limit, settings.CASE_SEARCH_DEPTH)
        rankings = [self.lexical(terms, depth), self.dense(vector, depth)]
        return rrf_fuse(rankings, k=rrf_k, limit=limit)

    # --- what a serving process holds ----------------------------------------------

    def vectors(self) -> VectorMatrix:
        """The vectors, refreshed from the indexer's log when due."""
        self._refresh()
        return self._vectors

    def term_index(self) -> TermIndex:
        """The passages' terms (MariaDB/MySQL), refreshed from the indexer's log when due.
        Built at a process's first lexical search, not with the vectors: the indexer
        reads only the vectors (near-duplicates), and holds no term index."""
        self._refresh()
        if self._terms is None:
            with self._lock:
                if self._terms is None:
                    # Newer than the log position the vectors were loaded at: the entries
                    # after it are applied to it again, which changes nothing.
                    self._terms = TermIndex.built(_all_terms())
                    _held_for_good()
        return self._terms

    def _refresh(self) -> None:
        now = time.monotonic()
        if self._vectors is not None and now - self._checked < settings.CASE_SEARCH_REFRESH_SECONDS:
            return
        with self._lock:
            if self._vectors is None or now - self._checked > FULL_RELOAD_AFTER_SECONDS:
                self._load_all()
            elif now - self._checked >= settings.CASE_SEARCH_REFRESH_SECONDS:
                self._apply_log()
                if self._terms is not None and self._terms.dead_share() > TERMS_DEAD_SHARE:
                    self._load_all()
            self._checked = time.monotonic()

    def forget(self) -> None:
        with self._lock:
            self._vectors, self._terms, self._seq, self._checked = None, None, 0, 0.0

    def _load_all(self) -> None:
        # The log position first: a case indexed while the passages are read is read
        # again at the next refresh, never missed.
        seq = CaseIndexLog.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
        stored = CasePassage.objects.filter(model=EMBEDDING_MODEL)
        # Room for the rows there are and some written meanwhile; the matrix grows past it.
        vectors = VectorMatrix(EMBEDDING_DIM, capacity=stored.count() * 21 // 20 + 64)
        last = 0
        while True:
            batch = list(
                stored.filter(id__gt=last)
                .order_by("id")
                .values_list("id", "case_id", "number", "vector")[:LOAD_BATCH]
            )
            if not batch:
                break
            self._add_rows(vectors, [row[1:] for row in batch])
            last = batch[-1][0]
        # The term index again only where it is used (term_index builds it at first use).
        terms = TermIndex.built(_all_terms()) if self._terms is not None else None
        self._vectors, self._terms, self._seq = vectors, terms, seq
        _held_for_good()

    def _apply_log(self) -> None:
        entries = list(
            CaseIndexLog.objects.filter(seq__gt=self._seq)
            .order_by("seq")
            .values_list("seq", "case_id")[:LOAD_BATCH]
        )
        if not entries:
            return
        case_ids = list(dict.fromkeys(case_id for _, case_id in entries))
        # One read of the cases' passages: the term index takes every one, the vectors
        # those of the current model.
        rows = CasePassage.objects.filter(case_id__in=case_ids).order_by("case_id", "number")
        rows = list(rows.values_list("case_id", "number", "model", "terms", "vector"))
        for case_id in case_ids:
            self._vectors.drop(case_id)
        current = [(c, n, vector) for c, n, model, _, vector in rows if model == EMBEDDING_MODEL]
        self._add_rows(self._vectors, current)
        if self._terms is not None:
            for case_id in case_ids:
                self._terms.drop(case_id)
            for case_id, number, _, terms, _ in rows:
                self._terms.add(case_id, number, terms)
        self._seq = entries[-1][0]

    @staticmethod
    def _add_rows(vectors: VectorMatrix, rows: list[tuple[str, int, bytes]]) -> None:
        by_case: dict[str, tuple[list[int], list[bytes]]] = {}
        for case_id, number, blob in rows:
            numbers, blobs = by_case.setdefault(case_id, ([], []))
            numbers.append(number)
            blobs.append(bytes(blob))
        for case_id, (numbers, blobs) in by_case.items():
            matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(
                len(numbers), EMBEDDING_DIM
            )
            vectors.drop(case_id)
            vectors.add(case_id, numbers, matrix)


def _held_for_good() -> None:
    """Leave what the process holds now out of the garbage collector's full passes: a
    case's rows and bookkeeping are a list each, and at 100,000 cases every full pass
    walked them all, 50-80 ms each, the slowest searches. Freed as usual once dropped
    (reference counting); only cycles among them would stay."""
    gc.freeze()


def _full_text_in_database() -> bool:
    """SQLite ranks terms itself (FTS5); on MariaDB/MySQL the term index does."""
    return connection.vendor == "sqlite"


def _all_terms() -> Iterator[tuple[str, int, str]]:
    """Every stored passage's case, number and terms, read a batch at a time."""
    last = 0
    while True:
        batch = list(
            CasePassage.objects.filter(id__gt=last)
            .order_by("id")
            .values_list("id", "case_id", "number", "terms")[:LOAD_BATCH]
        )
        if not batch:
            return
        for _, case_id, number, terms in batch:
            yield case_id, number, terms
        last = batch[-1][0]
