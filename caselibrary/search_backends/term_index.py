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

Held as postings per term: those of the last full load in segments (each the postings
of a run of consecutive rows, by term), those added since in a list per term. A dropped
passage's row is only marked dead; the owner loads everything again when the dead rows
grow many (`dead_share`).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from caselibrary.search_backends.held_cases import CaseCodes, rows_of

K1 = 1.2
B = 0.75
MAX_COUNT = 255  # a term's count in one passage is held in a byte
_ROW_BITS = 32
_ROW_MASK = (1 << _ROW_BITS) - 1
# Tokens read before their postings are made into a segment: a segment's transient
# arrays are about 10 MB, and a question looks its terms up in each of ~40 segments at
# 207,000 passages.
SEGMENT_TOKENS = 1 << 18
SEGMENT_ROWS = 1 << 16  # a segment's rows are held as offsets from its first, in 16 bits


class Segment(NamedTuple):
    """The postings of a run of rows, by term: those of terms[i] are
    first_row + offsets[starts[i]:starts[i + 1]] (ascending), with the term's count in
    each row."""

    first_row: int
    terms: np.ndarray  # int32, ascending
    starts: np.ndarray  # int32
    offsets: np.ndarray  # uint16
    counts: np.ndarray  # uint8

    def postings(self, at: int) -> tuple[np.ndarray, np.ndarray]:
        start, end = self.starts[at], self.starts[at + 1]
        rows = self.offsets[start:end].astype(np.int32)
        rows += self.first_row
        return rows, self.counts[start:end]


class TermIndex:
    def __init__(self, cases: CaseCodes | None = None) -> None:
        self.term_ids: dict[str, int] = {}
        self.cases = cases if cases is not None else CaseCodes()
        self._segments: list[Segment] = []  # the postings of the full load
        # Postings added since: term id -> (rows, counts).
        self._added: dict[int, tuple[array, array]] = {}
        # Per row: its case's code and passage number, its length in terms, whether it is
        # live (arrays with room to grow; rows from self.size on are unused).
        self.size = 0
        self._codes = np.zeros(0, dtype=np.int32)
        self._numbers = np.zeros(0, dtype=np.int32)
        self._lengths = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)
        self.live_rows = 0
        self._total_length = 0

    @classmethod
    def built(
        cls, passages: Iterable[tuple[str, int, str]], cases: CaseCodes | None = None
    ) -> TermIndex:
        """An index of `passages` (case id, passage number, terms), built in one go.

        The postings are made a segment at a time and kept as segments: at 207,000
        passages (9.8 million postings) sorting them all at once held three copies of
        them and lifted a process's peak 75 MB above what it kept; a row held as its
        offset in the segment takes 2 bytes instead of 4 (20 MB less)."""
        index = cls(cases)
        ids = index.term_ids
        chunk = array("i")  # the term ids of the rows since the last segment
        first_row = 0
        for case_id, number, terms in passages:
            tokens = terms.split()
            row = index._new_row(case_id, number, len(tokens))
            for token in set(tokens).difference(ids):
                ids[token] = len(ids)
            chunk.extend(map(ids.__getitem__, tokens))
            if len(chunk) >= SEGMENT_TOKENS or row + 1 - first_row == SEGMENT_ROWS:
                index._segments.append(index._segment(chunk, first_row, row + 1))
                first_row, chunk = row + 1, array("i")
        if chunk:
            index._segments.append(index._segment(chunk, first_row, index.size))
        return index

    def _segment(self, term_ids: array, first_row: int, end_row: int) -> Segment:
        """The segment of rows first_row..end_row - 1, whose terms these are."""
        term = np.frombuffer(term_ids, dtype=np.int32).astype(np.int64)
        lengths = self._lengths[first_row:end_row]
        rows = np.repeat(np.arange(end_row - first_row, dtype=np.int64), lengths)
        # Sorted by term, then row: one key per (term, row), with its count.
        keys, counts = np.unique((term << _ROW_BITS) | rows, return_counts=True)
        terms, starts = np.unique(keys >> _ROW_BITS, return_index=True)
        return Segment(
            first_row=first_row,
            terms=terms.astype(np.int32),
            starts=np.append(starts, len(keys)).astype(np.int32),
            offsets=(keys & _ROW_MASK).astype(np.uint16),
            counts=np.minimum(counts, MAX_COUNT).astype(np.uint8),
        )

    def __len__(self) -> int:
        return self.live_rows

    def dead_share(self) -> float:
        return 1 - self.live_rows / self.size if self.size else 0.0

    def add(self, case_id: str, number: int, terms: str) -> None:
        tokens = terms.split()
        row = self._new_row(case_id, number, len(tokens))
        for term, count in Counter(tokens).items():
            rows, counts = self._added.setdefault(self._term_id(term), (array("i"), array("B")))
            rows.append(row)
            counts.append(min(count, MAX_COUNT))

    def drop(self, *case_ids: str) -> None:
        """Mark the passages of these cases dead."""
        size = self.size
        for row in rows_of(self._codes[:size], self._live[:size], self.cases.known(case_ids)):
            self._live[row] = False
            self.live_rows -= 1
            self._total_length -= int(self._lengths[row])

    def held(self, terms: Iterable[str]) -> set[str]:
        """Those of `terms` that a live passage holds (one look-up for them all)."""
        known = [t for t in dict.fromkeys(terms) if t in self.term_ids]
        postings = self._postings([self.term_ids[t] for t in known]) if known else []
        return {term for term, (rows, _) in zip(known, postings, strict=True) if len(rows)}

    def search(self, terms: Iterable[str], limit: int) -> list[tuple[str, float]]:
        """The passages holding any of `terms`, best BM25 score first (ties: the earlier
        row), at most `limit`."""
        term_ids = [self.term_ids[t] for t in dict.fromkeys(terms) if t in self.term_ids]
        if not term_ids or not self.live_rows or limit < 1:
            return []
        # Rows added by another thread meanwhile are left out (each term's rows ascend);
        # the arrays read after the row count hold at least that many rows.
        size = self.size
        lengths = self._lengths
        average = self._total_length / self.live_rows
        scores = np.zeros(size, dtype=np.float64)
        for rows, counts in self._postings(term_ids):
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
        ids = self.cases.ids
        return [
            (f"{ids[self._codes[row]]}:{self._numbers[row]}", float(scores[row])) for row in found
        ]

    # --- inside ----------------------------------------------------------------------

    def _term_id(self, term: str) -> int:
        term_id = self.term_ids.get(term)
        if term_id is None:
            term_id = self.term_ids[term] = len(self.term_ids)
        return term_id

    def _new_row(self, case_id: str, number: int, length: int) -> int:
        row = self.size
        if row == len(self._live):
            self._grow()
        self._codes[row] = self.cases.code(case_id)
        self._numbers[row] = number
        self._lengths[row] = length
        self._live[row] = True
        self.size += 1
        self.live_rows += 1
        self._total_length += length
        return row

    def _grow(self) -> None:
        capacity = max(1024, len(self._live) * 3 // 2)
        for name in ("_codes", "_numbers", "_lengths", "_live"):
            old = getattr(self, name)
            new = np.zeros(capacity, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def _postings(self, term_ids: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each term, the live rows holding it (ascending) and its count in each."""
        wanted = np.asarray(term_ids, dtype=np.int32)
        parts: list[tuple[list[np.ndarray], list[np.ndarray]]] = [([], []) for _ in term_ids]
        for segment in self._segments:
            at = np.searchsorted(segment.terms, wanted)
            inside = at < len(segment.terms)
            held = np.zeros(len(wanted), dtype=bool)
            held[inside] = segment.terms[at[inside]] == wanted[inside]
            for n in np.flatnonzero(held):
                rows, counts = segment.postings(at[n])
                parts[n][0].append(rows)
                parts[n][1].append(counts)
        found = []
        for term_id, (rows, counts) in zip(term_ids, parts, strict=True):
            added = self._added.get(term_id)
            if added:
                # Copies (not views) of the growing lists: a list a view holds cannot grow.
                rows.append(np.array(added[0], dtype=np.int32))
                counts.append(np.array(added[1], dtype=np.uint8))
            if not rows:
                found.append((np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint8)))
                continue
            all_rows = rows[0] if len(rows) == 1 else np.concatenate(rows)
            all_counts = counts[0] if len(counts) == 1 else np.concatenate(counts)
            live = self._live[all_rows]
            if not live.all():
                all_rows, all_counts = all_rows[live], all_counts[live]
            found.append((all_rows, all_counts))
        return found
