"""Every passage vector of one embedding model, held by a serving process and scanned in
full (the database backend's dense ranking: database.py scores its best again from the
stored float32 vectors)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caselibrary.search_backends.held_cases import CaseCodes, rows_of


def passage_id(case_id: str, number: int) -> str:
    return f"{case_id}:{number}"


class VectorMatrix:
    """Every passage vector of one model, by passage id, scanned in full.

    A row is held in 4 bits a component, with its own scale (the largest component maps
    to 7; two components a byte, the first half of the vector in the low nibbles): an
    eighth of float32's memory, which is what lets a web worker hold a large library (at
    100,000 cases, 207,000 passages of 512 components: 53 MB; 106 MB as int8, 424 MB as
    float32). Its scores are within about 0.01 of the float32 cosine: the database
    backend ranks by them and scores the best again from the stored float32 vectors
    (`keys`: each row's passage in case_passage). The scan converts a block of rows at a
    time to float32 for BLAS (207,000 rows of 512: 44 ms on one core, 35 ms as int8).
    """

    BLOCK = 2048
    SCORES_HELD = 4_000_000  # 16 MB of float32 scores
    LEVELS = 7  # a component is -7..7 times the row's scale, held as 1..15

    def __init__(self, dim: int, capacity: int = 0, cases: CaseCodes | None = None) -> None:
        if dim % 2:
            raise ValueError("a vector is held two components a byte: its length must be even")
        # A full load knows how many rows come and allocates them once: growing the
        # matrix on the way would hold the old and the new one at once.
        self.dim = dim
        self.matrix = np.zeros((capacity, dim // 2), dtype=np.uint8)
        self.scales = np.zeros(capacity, dtype=np.float32)
        self.live = np.zeros(capacity, dtype=bool)
        # Each row's case (its code: held_cases.py), passage number and stored row.
        self.cases = cases if cases is not None else CaseCodes()
        self.codes = np.zeros(capacity, dtype=np.int32)
        self.numbers = np.zeros(capacity, dtype=np.int32)
        self.keys = np.zeros(capacity, dtype=np.int64)
        self.used = 0  # rows from here on were never written
        self.free: list[int] = []  # rows written once, dropped since

    def __len__(self) -> int:
        return int(self.live.sum())

    def __contains__(self, case_id: str) -> bool:
        wanted = self.cases.known([case_id])
        return bool(len(rows_of(self.codes[: self.used], self.live[: self.used], wanted)))

    def drop(self, *case_ids: str) -> None:
        used = self.used
        rows = rows_of(self.codes[:used], self.live[:used], self.cases.known(case_ids))
        self.live[rows] = False
        self.free += rows.tolist()

    def add(
        self,
        case_id: str,
        numbers: Sequence[int],
        vectors: np.ndarray,
        keys: Sequence[int] | None = None,
    ) -> None:
        """Add passages of a case (the ones it had are dropped first, by the caller)."""
        code = self.cases.code(case_id)
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(numbers), self.dim)
        peaks = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, np.float32)
        scales = np.where(peaks > 0, peaks / self.LEVELS, 1.0).astype(np.float32)
        levels = np.rint(vectors / scales[:, None]).astype(np.int16) + (self.LEVELS + 1)
        half = self.dim // 2
        packed = (levels[:, :half] | (levels[:, half:] << 4)).astype(np.uint8)
        keys = keys if keys is not None else [0] * len(numbers)
        for number, row_values, scale, key in zip(numbers, packed, scales, keys, strict=True):
            row = self.free.pop() if self.free else self._grow()
            self.matrix[row] = row_values
            self.scales[row] = scale
            self.codes[row] = code
            self.numbers[row] = number
            self.keys[row] = key
            self.live[row] = True

    def _grow(self) -> int:
        used = self.used
        if used == len(self.matrix):
            capacity = max(1024, used * 3 // 2)
            for name in ("matrix", "scales", "codes", "numbers", "keys", "live"):
                old = getattr(self, name)
                new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
                new[:used] = old[:used]
                setattr(self, name, new)
        self.used += 1
        return used

    def passage_id(self, row: int) -> str:
        return passage_id(self.cases.ids[self.codes[row]], int(self.numbers[row]))

    def nearest_rows(self, vectors: np.ndarray, limit: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each of `vectors`, its nearest live rows and their held scores, best first,
        in one scan of the matrix: each block of rows is converted once and multiplied
        with all of them. The indexer looks for each new passage's neighbours: one scan
        per passage made it spend 89 % of its time there, and slow down as the library
        grew."""
        vectors = np.asarray(vectors, dtype=np.float32)
        used = self.used
        if not used or not len(vectors):
            return [(np.zeros(0, np.int64), np.zeros(0, np.float32)) for _ in vectors]
        half = self.dim // 2
        found = []
        # The scores of a chunk of queries at once: at most SCORES_HELD floats.
        chunk = max(1, self.SCORES_HELD // used)
        size = min(self.BLOCK, used)
        nibbles = np.empty((size, half), dtype=np.uint8)
        low = np.empty((size, half), dtype=np.float32)
        high = np.empty((size, half), dtype=np.float32)
        for first in range(0, len(vectors), chunk):
            queries = vectors[first : first + chunk]
            low_q, high_q = queries[:, :half].T.copy(), queries[:, half:].T.copy()
            scores = np.empty((used, len(queries)), dtype=np.float32)
            more = np.empty((size, len(queries)), dtype=np.float32)
            for start in range(0, used, self.BLOCK):
                rows = self.matrix[start : min(start + self.BLOCK, used)]
                n = len(rows)
                np.bitwise_and(rows, 15, out=nibbles[:n])
                np.copyto(low[:n], nibbles[:n], casting="unsafe")
                np.right_shift(rows, 4, out=nibbles[:n])
                np.copyto(high[:n], nibbles[:n], casting="unsafe")
                np.dot(low[:n], low_q, out=scores[start : start + n])
                np.dot(high[:n], high_q, out=more[:n])
                scores[start : start + n] += more[:n]
            # The levels were held as 1..15 for -7..7: take the offset off again.
            scores -= (self.LEVELS + 1) * queries.sum(axis=1)
            scores *= self.scales[:used, None]
            scores[~self.live[:used]] = -np.inf
            found += [self._best(scores[:, column], limit) for column in range(len(queries))]
        return found

    def _best(self, scores: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        limit = min(limit, len(scores))
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[self.live[top]]
        return top, scores[top]
