"""The case ids a serving process holds, each once, as a small integer.

The vectors and the term index keep a case per row. Held as a string and a list of rows
per case, that bookkeeping cost a web worker about 20 MB for each of the two at 100,000
cases (207,000 passages); as an int32 code per row, with the ids in one table both
share, it is under 1 MB each plus the table. A case's rows are found by comparing the
codes (a vectorised scan, about 0.1 ms over 207,000 rows, once for all the cases of a
refresh).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class CaseCodes:
    def __init__(self) -> None:
        self.ids: list[str] = []
        self._codes: dict[str, int] = {}

    def code(self, case_id: str) -> int:
        """The case's code, given it now if it has none."""
        code = self._codes.get(case_id)
        if code is None:
            code = self._codes[case_id] = len(self.ids)
            self.ids.append(case_id)
        return code

    def known(self, case_ids: Iterable[str]) -> np.ndarray:
        """The codes of those of `case_ids` that have one."""
        codes = [self._codes.get(case_id) for case_id in case_ids]
        return np.array([code for code in codes if code is not None], dtype=np.int32)


def rows_of(codes: np.ndarray, live: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The live rows whose code is one of `wanted` (codes and live: one entry a row)."""
    if not len(wanted):
        return np.zeros(0, dtype=np.int64)
    if len(wanted) == 1:
        return np.flatnonzero(live & (codes == wanted[0]))
    return np.flatnonzero(live & np.isin(codes, wanted))
