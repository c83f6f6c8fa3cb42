"""The default backend: passages in this database, no other server.

Lexical ranking by BM25 over the passages' search terms (search_text.search_terms, which
cuts Chinese and keeps codes whole): on SQLite by its FTS5 engine's bm25() over
`case_passage.lexemes` (each term stored as a fixed-length key of letters and digits,
`lexeme`, so the engine's own tokenizer neither drops nor splits one); on MariaDB/MySQL by
an index of `case_passage.terms` held in memory (term_index.py), because InnoDB's
FULLTEXT query reads every row holding any of the question's terms at about 30 us a row
(p50 57-68 ms over 28,000 passages, 2.3 s over 207,000) and ranks by a TF-IDF variant.

Dense ranking exact: each serving process holds every passage vector of the current
embedding model in one matrix (a row per passage, 4 bits a component with a scale per
row), ranks by it, and scores the best again from the float32 vectors in case_passage.
It keeps the matrix, and on MariaDB/MySQL the term index, current by the indexer's log
(case_index_log): every CASE_SEARCH_REFRESH_SECONDS at most, the cases logged past the
last entry it applied are reloaded from case_passage. A log that no longer holds that
entry as it was applied, and has older ones (a backup restored into the database: its log
starts again below it), has every passage reloaded.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from caselibrary.embedding import EMBEDDING_DIM, EMBEDDING_MODEL
from caselibrary.models import CaseIndexLog, CasePassage
from caselibrary.search_backends.base import IndexedPassage, rrf_fuse
from caselibrary.search_backends.held_cases import CaseCodes
from caselibrary.search_backends.term_index import TermIndex
from caselibrary.search_backends.vector_matrix import VectorMatrix, passage_id

LOAD_BATCH = 5_000
# What a process keeps of the log entry it applied last (DatabaseBackend._log_went_back).
_MARK = ("seq", "case_id", "indexed_at")
# The common terms of the library (common_terms): estimated on the latest passages,
# trusted for ten minutes (shares move slowly, and a stale one only decides whether a
# glossary word joins a full-text query).
COMMON_TERMS_SECONDS = 600
COMMON_TERMS_FROM = 1_000
COMMON_TERMS_SAMPLE = 2_000
# A process that has not refreshed for this long reloads everything: the log it would
# read may have been pruned meanwhile (caselibrary/services/index.py keeps an hour).
FULL_RELOAD_AFTER_SECONDS = 1800
# The held vectors' best RESCORED_SHARE x limit + RESCORED_MORE are scored again from the
# stored ones: 4-bit scores err by about 0.01, and a passage ranked 50th by its cosine is
# well inside the first 110 by the held scores.
RESCORED_SHARE = 2
RESCORED_MORE = 10
# The term index is loaded afresh once this share of its rows are passages since dropped.
TERMS_DEAD_SHARE = 0.25


def lexeme(term: str) -> str:
    """A term as the full-text engines index it: "t" and 15 hex digits."""
    return "t" + hashlib.blake2b(term.encode(), digest_size=8).hexdigest()[:15]


def lexemes(terms: str) -> str:
    return " ".join(lexeme(term) for term in terms.split())


class DatabaseBackend:
    name = "database"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._vectors: VectorMatrix | None = None
        self._terms: TermIndex | None = None
        # The log entry applied last (seq, case, when), as read: None from an empty log.
        self._mark: tuple[int, str, datetime] | None = None
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
        full_text = _full_text_in_database()
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
                    # Only SQLite's FTS5 reads them: elsewhere they would be a quarter
                    # of each row that every search's read of stored vectors goes through.
                    lexemes=lexemes(p.terms) if full_text else "",
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
            return self.term_index().held(terms)
        return {term for term in dict.fromkeys(terms) if self.lexical(term, 1)}

    def dense(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        return self.dense_each([vector], limit)[0]

    def dense_each(
        self,
        vectors: Sequence[np.ndarray],
        limit: int,
        *,
        rescore_above: float | None = None,
    ) -> list[list[tuple[str, float]]]:
        """For each of `vectors`, the nearest passages by cosine, in one scan of the held
        vectors: the RESCORED_SHARE x `limit` (+ RESCORED_MORE) best by the held scores,
        scored again from their stored float32 vectors (one read), the best `limit` of
        those. The held scores' error (about 0.01) never reaches the answer.

        `rescore_above`: only the candidates whose held score reaches it are scored again;
        the others keep their held score. The indexer's near-duplicate check asks so: it
        reads only cosines near its threshold, and scoring every neighbour of each new
        passage again read about a hundred stored vectors per case."""
        if not len(vectors):
            return []
        vectors = np.asarray(vectors, dtype=np.float32)
        held = self.vectors()
        nearest = held.nearest_rows(vectors, limit * RESCORED_SHARE + RESCORED_MORE)
        floor = -np.inf if rescore_above is None else rescore_above
        stored = _stored_vectors(
            {int(key) for rows, scores in nearest for key in held.keys[rows[scores >= floor]]}
        )
        found = []
        for vector, (rows, scores) in zip(vectors, nearest, strict=True):
            again = scores >= floor
            # A passage rewritten since the process loaded it is scored as it is now.
            mine = [stored[key] for key in held.keys[rows[again]].tolist() if key in stored]
            scored = list(zip([pid for pid, _ in mine], _cosines(mine, vector), strict=True))
            scored += [
                (held.passage_id(row), float(score))
                for row, score in zip(rows[~again], scores[~again], strict=True)
            ]
            scored.sort(key=lambda item: -item[1])
            found.append(scored[:limit])
        return found

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
                    self._terms = TermIndex.built(_all_terms(), self._vectors.cases)
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
            self._vectors, self._terms, self._mark, self._checked = None, None, None, 0.0

    def _load_all(self) -> None:
        # The log position first: a case indexed while the passages are read is read
        # again at the next refresh, never missed.
        mark = CaseIndexLog.objects.order_by("-seq").values_list(*_MARK).first()
        stored = CasePassage.objects.filter(model=EMBEDDING_MODEL)
        # Room for the rows there are and some written meanwhile; the matrix grows past it.
        cases = CaseCodes()
        vectors = VectorMatrix(EMBEDDING_DIM, stored.count() * 21 // 20 + 64, cases)
        last = 0
        while True:
            batch = list(
                stored.filter(id__gt=last)
                .order_by("id")
                .values_list("id", "case_id", "number", "vector")[:LOAD_BATCH]
            )
            if not batch:
                break
            # No case to drop first: a case's passages may come in two batches.
            self._add_rows(vectors, batch)
            last = batch[-1][0]
        # The term index again only where it is used (term_index builds it at first use).
        terms = TermIndex.built(_all_terms(), cases) if self._terms is not None else None
        self._vectors, self._terms = vectors, terms
        self._mark = mark
        _held_for_good()

    def _apply_log(self) -> None:
        # From the entry applied last, in the same read: it is still there as it was
        # unless the log was pruned past it or replaced (_log_went_back).
        entries = list(
            CaseIndexLog.objects.filter(seq__gte=self._seq)
            .order_by("seq")
            .values_list(*_MARK)[: LOAD_BATCH + 1]
        )
        if self._log_went_back(entries):
            self._load_all()
            return
        entries = [entry for entry in entries if entry[0] > self._seq][:LOAD_BATCH]
        if not entries:
            return
        case_ids = list(dict.fromkeys(case_id for _, case_id, _ in entries))
        # One read of the cases' passages: the term index takes every one, the vectors
        # those of the current model.
        rows = CasePassage.objects.filter(case_id__in=case_ids).order_by("case_id", "number")
        rows = list(rows.values_list("id", "case_id", "number", "model", "terms", "vector"))
        self._vectors.drop(*case_ids)
        current = [(k, c, n, v) for k, c, n, model, _, v in rows if model == EMBEDDING_MODEL]
        self._add_rows(self._vectors, current)
        if self._terms is not None:
            self._terms.drop(*case_ids)
            for _, case_id, number, _, terms, _ in rows:
                self._terms.add(case_id, number, terms)
        self._mark = entries[-1]

    @property
    def _seq(self) -> int:
        """The log position applied last: 0 before any entry."""
        return self._mark[0] if self._mark else 0

    def _log_went_back(self, entries: list[tuple[int, str, datetime]]) -> bool:
        """Whether the log is no longer the one the process read: a backup restored
        into the database while it ran. The restored log starts again below the entry
        it applied last, so the cases indexed since would be read from there on only
        once the log passed that entry again (a restore took 755 back to 573), and the
        process would keep holding the cases the restore took away. Seen as that entry
        changed (another one in its place), or gone while older entries are there; gone
        with nothing before it is the log pruned (services/index.py keeps an hour), and
        there is one more read of the log only then."""
        mark = self._mark
        if mark is None:
            return False  # loaded from an empty log: every entry is past it
        if entries and entries[0][0] == mark[0]:
            return tuple(entries[0]) != tuple(mark)
        if entries:
            return False  # pruned past it, indexed since
        return CaseIndexLog.objects.filter(seq__lt=mark[0]).exists()

    @staticmethod
    def _add_rows(vectors: VectorMatrix, rows: list[tuple[int, str, int, bytes]]) -> None:
        """Add stored passages (their row id, case, number and float32 vector)."""
        by_case: dict[str, tuple[list[int], list[int], list[bytes]]] = {}
        for key, case_id, number, blob in rows:
            keys, numbers, blobs = by_case.setdefault(case_id, ([], [], []))
            keys.append(key)
            numbers.append(number)
            blobs.append(bytes(blob))
        for case_id, (keys, numbers, blobs) in by_case.items():
            matrix = np.frombuffer(b"".join(blobs), dtype="<f4")
            vectors.add(case_id, numbers, matrix, keys)


def _cosines(stored: list[tuple[str, np.ndarray]], vector: np.ndarray) -> list[float]:
    if not stored:
        return []
    return (np.stack([v for _, v in stored]) @ vector).tolist()


def _stored_vectors(keys: set[int]) -> dict[int, tuple[str, np.ndarray]]:
    """The passage id and stored float32 vector of each of these case_passage rows that
    still holds a vector of the current model."""
    found = {}
    keys_left = sorted(keys)
    for start in range(0, len(keys_left), LOAD_BATCH):
        rows = CasePassage.objects.filter(
            id__in=keys_left[start : start + LOAD_BATCH], model=EMBEDDING_MODEL
        ).values_list("id", "case_id", "number", "vector")
        for key, case_id, number, blob in rows:
            found[key] = (passage_id(case_id, number), np.frombuffer(blob, dtype="<f4"))
    return found


def _held_for_good() -> None:
    """After a load: leave what the process holds now out of the garbage collector's full
    passes (at 100,000 cases, with a list per case then, each pass took 50-80 ms and made
    the slowest searches; freed as usual once dropped, by reference counting), and give
    the C heap's free memory back to the system. A load's reads leave it fragmented:
    at 100,000 cases 33 MB after the vectors and 20 MB after the term index stayed in
    the process, free, and a web worker's peak is what counts against its memory."""
    gc.freeze()
    _trim_heap()


def _trim_heap() -> None:
    try:
        trim = ctypes.CDLL(None).malloc_trim  # glibc only
    except (OSError, AttributeError):
        return
    trim(0)


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
