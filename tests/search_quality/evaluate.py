"""Search quality on a labelled query set: `python -m tests.search_quality.evaluate`.

The case library is the demo one (feedback/demo/cases.json); the queries, in Chinese and
English, each list the cases that answer them (none for a third of them: questions the
library has no case for). The index is built exactly as the service builds it, and each
query asked as the API asks it (caselibrary.search_index), so the figures are the
service's, without a database in between.

hit@k: share of answerable queries with a right case among the first k hits. MRR: mean of
1/rank of the first right case (0 when none is returned). No-answer precision: share of
the no-answer queries answered with no hit at all (a wrong case offered to an operator is
the failure it counts). NONE precision: of the queries answered with no hit, the share
that truly had no answer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from caselibrary.search_index import L1, CaseIndex, CaseText, build, current_version

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "feedback" / "demo" / "cases.json"
QUERIES = Path(__file__).resolve().parent / "queries.json"
DEFAULT_THRESHOLD = 0.35
TOP = 3


@dataclass(frozen=True)
class Quality:
    queries: int
    answerable: int
    no_answer: int
    hit_at_1: float
    hit_at_3: float
    mrr: float
    no_answer_precision: float
    none_precision: float
    l1_share: float
    misses: tuple[str, ...]

    def table(self) -> str:
        rows = [
            (
                "queries (answerable / no answer)",
                f"{self.queries} ({self.answerable} / {self.no_answer})",
                "",
            ),
            ("hit@1", f"{self.hit_at_1:.3f}", ""),
            ("hit@3", f"{self.hit_at_3:.3f}", ">= 0.9"),
            ("MRR", f"{self.mrr:.3f}", ""),
            ("no-answer precision", f"{self.no_answer_precision:.3f}", ">= 0.9"),
            ("NONE precision", f"{self.none_precision:.3f}", ""),
        ]
        lines = ["| metric | value | target |", "|---|---|---|"]
        lines += [f"| {name} | {value} | {target} |" for name, value, target in rows]
        return "\n".join(lines)


def load_cases(path: Path = CASES) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def load_queries(path: Path = QUERIES) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def evaluate(
    cases: list[dict], queries: list[dict], *, threshold: float = DEFAULT_THRESHOLD
) -> Quality:
    """Build an index of `cases` (keyed by their "key") and ask every query."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory)
        build(
            (
                CaseText(
                    case["key"],
                    case["title"],
                    case["root_cause"],
                    case["solution"],
                    case.get("error_code"),
                )
                for case in sorted(cases, key=lambda c: c["key"])
            ),
            path,
        )
        index = CaseIndex(path / current_version(path))
        return _score(index, queries, threshold)


def _score(index: CaseIndex, queries: list[dict], threshold: float) -> Quality:
    ranks: list[int | None] = []
    rejected = offered_wrongly = answered_none = none_right = l1 = 0
    misses = []
    for item in queries:
        found = index.find(query=item["query"], limit=TOP, threshold=threshold)
        ids = [f.case_id for f in found]
        l1 += any(f.match_level == L1 for f in found)
        if not ids:
            answered_none += 1
        expected = set(item["expect"])
        if not expected:
            if ids:
                offered_wrongly += 1
                misses.append(f"no-answer query found {ids[0]}: {item['query']}")
            else:
                rejected += 1
                none_right += 1
            continue
        rank = next((n for n, case_id in enumerate(ids, start=1) if case_id in expected), None)
        ranks.append(rank)
        if rank is None:
            misses.append(f"missed {sorted(expected)} (got {ids}): {item['query']}")
    answerable = len(ranks)
    no_answer = rejected + offered_wrongly
    return Quality(
        queries=len(queries),
        answerable=answerable,
        no_answer=no_answer,
        hit_at_1=_share(sum(r == 1 for r in ranks), answerable),
        hit_at_3=_share(sum(r is not None and r <= TOP for r in ranks), answerable),
        mrr=statistics.fmean([1 / r if r else 0.0 for r in ranks]) if ranks else 0.0,
        no_answer_precision=_share(rejected, no_answer),
        none_precision=_share(none_right, answered_none),
        l1_share=_share(l1, len(queries)),
        misses=tuple(misses),
    )


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    parser.add_argument("--sweep", action="store_true", help="try thresholds 0.1 to 0.6")
    parser.add_argument("--misses", action="store_true", help="list the queries it got wrong")
    options = parser.parse_args()
    cases, queries = load_cases(), load_queries()
    if options.sweep:
        for step in range(10, 61, 5):
            q = evaluate(cases, queries, threshold=step / 100)
            print(
                f"threshold {step / 100:.2f}: hit@1 {q.hit_at_1:.3f} hit@3 {q.hit_at_3:.3f} "
                f"MRR {q.mrr:.3f} no-answer precision {q.no_answer_precision:.3f} "
                f"NONE precision {q.none_precision:.3f}"
            )
        return
    quality = evaluate(cases, queries, threshold=options.threshold)
    print(f"{len(cases)} cases, threshold {options.threshold}\n")
    print(quality.table())
    if options.misses:
        print("\n" + "\n".join(quality.misses))


if __name__ == "__main__":
    main()
