"""Every passage's search terms in memory, ranked by BM25 as SQLite's FTS5 ranks them.

The database backend's lexical ranking on MariaDB/MySQL. InnoDB's FULLTEXT query scores
every row holding any of the question's terms, at about 30 us a row: over the 28,000
passages of a generated library of 13,500 cases one question took p50 57-68 ms and up to
400 ms (p50 2.3-2.8 s at 207,000 passages), where this index answers in about a
millisecond. Each serving process holds it beside the vectors and keeps it current the
same way (caselibrary/search_backends/database.py), from the terms stored in
`case_passage.terms`.

The scores are FTS5's bm25() (k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)),
at least 1e-6), so a question ranks the same passages first on either database.

Held as postings per term: those of the last full load in flat arrays (a passage's row,
its count of the term), those added since in a list per term. A dropped passage's row is
only marked dead; the owner loads everything again when the dead rows grow many
(`dead_share`).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable

import numpy as np

K1 = 1.2
B = 0.75
MAX_COUNT = 255  # a term's count in one passage is held in a byte
# A posting packed for the build: term id (up to 2^23) | row (up to 2^32) | count (a byte).
_COUNT_BITS = 8
_ROW_SHIFT = 32
_TERM_SHIFT = _ROW_SHIFT + _COUNT_BITS
_ROW_MASK = (1 << _ROW_SHIFT) - 1
_COUNT_MASK = (1 << _COUNT_BITS) - 1
BUILD_CHUNK = 1 << 20  # postings unpacked at a time
TOKENS_HELD = 1 << 16  # a passage's tokens are strings: few held at a time


class TermIndex:
    def __init__(self) -> None:
        self.term_ids: dict[str, int] = {}
        # Postings of the full load: those of term t are rows[starts[t]:starts[t + 1]].
        self._starts = np.zeros(1, dtype=np.int64)
        self._rows = np.zeros(0, dtype=np.int32)
        self._counts = np.zeros(0, dtype=np.uint8)
        # Postings added since: term id -> (rows, counts).
        self._added: dict[int, tuple[array, array]] = {}
        # Per row: its case and passage number, its length in terms, whether it is live
        # (arrays with room to grow; rows past len(self.cases) are unused).
        self.cases: list[str | None] = []
        self._numbers = np.zeros(0, dtype=np.int32)
        self._lengths = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)
        self.rows_of: dict[str, list[int]] = {}
        self.live_rows = 0
        self._total_length = 0

    @classmethod
    def built(cls, passages: Iterable[tuple[str, int, str]]) -> TermIndex:
        """An index of `passages` (case id, passage number, terms), built in one go.

        Each posting is packed in one integer (term id, row, count), sorted once in place
        and unpacked a slice at a time: a first version that counted each passage's
        terms in Python and sorted the postings by an index took 14.3 s and peaked about
        230 MB above what it kept for 207,000 passages (9.8 million postings)."""
        index = cls()
        parts = []
        chunk: list[str] = []
        first_row = 0
        for case_id, number, terms in passages:
            tokens = terms.split()
            row = index._new_row(case_id, number, len(tokens))
            chunk += tokens
            if len(chunk) >= TOKENS_HELD:
                parts.append(index._packed(chunk, first_row, row + 1))
                first_row, chunk = row + 1, []
        parts.append(index._packed(chunk, first_row, len(index.cases)))
        if len(index.term_ids) >= 1 << (63 - _TERM_SHIFT):
            raise ValueError(f"{len(index.term_ids):,} distinct terms: more than a build packs")
        packed = np.concatenate(parts)
        del parts
        packed.sort()
        index._rows = np.empty(len(packed), dtype=np.int32)
        index._counts = np.empty(len(packed), dtype=np.uint8)
        held = np.zeros(len(index.term_ids), dtype=np.int64)
        for start in range(0, len(packed), BUILD_CHUNK):
            part = packed[start : start + BUILD_CHUNK]
            index._rows[start : start + len(part)] = (part >> _COUNT_BITS) & _ROW_MASK
            index._counts[start : start + len(part)] = part & _COUNT_MASK
            held += np.bincount(part >> _TERM_SHIFT, minlength=len(index.term_ids))
        index._starts = np.zeros(len(index.term_ids) + 1, dtype=np.int64)
        np.cumsum(held, out=index._starts[1:])
        return index

    def _packed(self, tokens: list[str], first_row: int, end_row: int) -> np.ndarray:
        """The postings of rows first_row..end_row - 1, whose `tokens` these are, each as
        term id, row and count packed in one int64 (the term id highest, so that sorting
        orders them by term)."""
        ids = self.term_ids
        for token in dict.fromkeys(tokens).keys() - ids.keys():
            ids[token] = len(ids)
        term = np.fromiter(map(ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        lengths = self._lengths[first_row:end_row]
        rows = np.repeat(np.arange(first_row, end_row, dtype=np.int64), lengths)
        keys, counts = np.unique((term << _ROW_SHIFT) | rows, return_counts=True)
        return (keys << _COUNT_BITS) | np.minimum(counts, MAX_COUNT)

    def __len__(self) -> int:
        return self.live_rows

    def dead_share(self) -> float:
        return 1 - self.live_rows / len(self.cases) if self.cases else 0.0

    def add(self, case_id: str, number: int, terms: str) -> None:
        tokens = terms.split()
        row = self._new_row(case_id, number, len(tokens))
        for term, count in Counter(tokens).items():
            rows, counts = self._added.setdefault(self._term_id(term), (array("i"), array("B")))
            rows.append(row)
            counts.append(min(count, MAX_COUNT))

    def drop(self, case_id: str) -> None:
        for row in self.rows_of.pop(case_id, []):
            self._live[row] = False
            self.cases[row] = None
            self.live_rows -= 1
            self._total_length -= self._lengths[row]

    def holds(self, term: str) -> bool:
        """Whether a live passage holds `term`."""
        term_id = self.term_ids.get(term)
        return term_id is not None and len(self._postings(term_id)[0]) > 0

    def search(self, terms: Iterable[str], limit: int) -> list[tuple[str, float]]:
        """The passages holding any of `terms`, best BM25 score first (ties: the earlier
        row), at most `limit`."""
        term_ids = [self.term_ids[t] for t in dict.fromkeys(terms) if t in self.term_ids]
        if not term_ids or not self.live_rows or limit < 1:
            return []
        # Rows added by another thread meanwhile are left out (each term's rows ascend);
        # the arrays read after the row count hold at least that many rows.
        size = len(self.cases)
        lengths = self._lengths
        average = self._total_length / self.live_rows
        scores = np.zeros(size, dtype=np.float64)
        for term_id in term_ids:
            rows, counts = self._postings(term_id)
            if len(rows) and rows[-1] >= size:
                keep = np.searchsorted(rows, size)
                rows, counts = rows[:keep], counts[:keep]
            if not len(rows):
                continue
            held = len(rows)
            idf = math.log((self.live_rows - held + 0.5) / (held + 0.5))
            idf = idf if idf > 0 else 1e-6
            tf = counts.astype(np.float64)
            norm = K1 * (1 - B + B * lengths[rows] / average) if average else K1
            scores[rows] += idf * tf * (K1 + 1) / (tf + norm)
        found = np.flatnonzero(scores)
        if len(found) > limit:
            found = found[np.argpartition(-scores[found], limit - 1)[:limit]]
        found = found[np.lexsort((found, -scores[found]))]
        return [(f"{self.cases[row]}:{self._numbers[row]}", float(scores[row])) for row in found]

    # --- inside ----------------------------------------------------------------------

    def _term_id(self, term: str) -> int:
        term_id = self.term_ids.get(term)
        if term_id is None:
            term_id = self.term_ids[term] = len(self.term_ids)
        return term_id

    def _new_row(self, case_id: str, number: int, length: int) -> int:
        row = len(self.cases)
        if row == len(self._live):
            self._grow()
        rows = self.rows_of.get(case_id)
        if rows is None:
            rows = self.rows_of[case_id] = []
        else:
            case_id = self.cases[rows[0]]  # one string object per case, not per row
        rows.append(row)
        self.cases.append(case_id)
        self._numbers[row] = number
        self._lengths[row] = length
        self._live[row] = True
        self.live_rows += 1
        self._total_length += length
        return row

    def _grow(self) -> None:
        capacity = max(1024, len(self._live) * 3 // 2)
        for name in ("_numbers", "_lengths", "_live"):
            old = getattr(self, name)
            new = np.zeros(capacity, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def _postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """The live rows holding the term, and its count in each."""
        rows, counts = self._rows[:0], self._counts[:0]
        if term_id + 1 < len(self._starts):
            start, end = self._starts[term_id], self._starts[term_id + 1]
            rows, counts = self._rows[start:end], self._counts[start:end]
        added = self._added.get(term_id)
        if added:
            # Copies (not views) of the growing lists: a list that a view holds cannot grow.
            rows = np.concatenate([rows, np.array(added[0], dtype=np.int32)])
            counts = np.concatenate([counts, np.array(added[1], dtype=np.uint8)])
        live = self._live[rows]
        if live.all():
            return rows, counts
        return rows[live], counts[live]
