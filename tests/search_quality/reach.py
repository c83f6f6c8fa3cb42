"""What any answer-or-NONE decision could reach on the labelled questions:
`python -m tests.search_quality.reach`.

Asks every question as the evaluation does (tests/search_quality/evaluate.py: a
throwaway database, the service's indexer, `rank_cases`), keeping both rankings to depth
200, and for each question without an exact hit the first similar candidate's features.
Then chooses, on the very questions it is scored on, the decision that answers the most
questions whose right case is among the first three while NONE-when-unanswerable stays
at least 0.9: the best pair of thresholds on any two features, and a logistic regression
of all of them. Fitted to the set it is scored on, each is an upper bound for its kind
of decision on these features, not a calibration (calibrate.py is that).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np

from tests.search_quality.evaluate import TOP

DEPTH = 200
NONE_TARGET = 0.9
FEATURES = (
    "peak",
    "coverage",
    "cosine",
    "score",
    "bm25",
    "cosine_z",
    "cosine_gap",
    "lexical_rank",
    "dense_rank",
    "score_margin",
)


class Recording:
    """A search backend that answers as the given one, keeping both rankings to DEPTH."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.lexical_ranking: list[tuple[str, float]] = []
        self.dense_ranking: list[tuple[str, float]] = []

    def lexical(self, terms: str, limit: int) -> list[tuple[str, float]]:
        self.lexical_ranking = self.backend.lexical(terms, max(limit, DEPTH))
        return self.lexical_ranking[:limit]

    def dense(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        self.dense_ranking = self.backend.dense(vector, max(limit, DEPTH))
        return self.dense_ranking[:limit]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)


@dataclass
class Question:
    answerable: bool
    exact: bool  # an L0 candidate: the decision is not asked
    unknown_name: bool
    # The rank of the first right case among the hits given (exact questions) or among
    # the similar candidates before the decision (the others); None when not there.
    rank: int | None
    features: dict[str, float] | None  # the first similar candidate's


def _best_per_case(ranking: list[tuple[str, float]]) -> list[float]:
    best: dict[str, float] = {}
    for pid, score in ranking:
        best.setdefault(pid.rpartition(":")[0], score)
    return list(best.values())


def ask(queries: list[dict], keys_by_id: dict[str, str]) -> list[Question]:
    from caselibrary.search_backends.base import get_backend
    from caselibrary.search_engine import L0, L1, rank_cases

    asked = []
    for item in queries:
        backend = Recording(get_backend())
        ranked = rank_cases(query=item["query"], limit=TOP, backend=backend)
        expected = set(item["expect"])
        exact = any(c.match_level == L0 for c in ranked.candidates)
        similar = [c for c in ranked.candidates if c.match_level == L1]
        listed = ranked.hits if exact else similar
        keys = [keys_by_id.get(c.case_id) for c in listed]
        rank = next((n for n, key in enumerate(keys, start=1) if key in expected), None)
        features = None
        if similar:
            top = similar[0]
            cosines = _best_per_case(backend.dense_ranking) or [0.0]
            others = cosines[1:21] or [0.0]
            spread = statistics.pstdev(others) if len(others) > 1 else 0.0
            bm25 = _best_per_case(backend.lexical_ranking) or [0.0]
            features = {
                "peak": top.peak if top.peak is not None else -1.0,
                "coverage": top.coverage or 0.0,
                "cosine": top.cosine if top.cosine is not None else -1.0,
                "score": top.score,
                "bm25": math.log1p(bm25[0]),
                "cosine_z": (cosines[0] - statistics.fmean(others)) / (spread or 1.0),
                "cosine_gap": cosines[0] - (cosines[1] if len(cosines) > 1 else 0.0),
                "lexical_rank": -math.log(top.lexical_rank or DEPTH),
                "dense_rank": -math.log(top.dense_rank or DEPTH),
                "score_margin": top.score - (similar[1].score if len(similar) > 1 else 0.0),
            }
        asked.append(
            Question(
                answerable=bool(expected),
                exact=exact,
                unknown_name=bool(ranked.unknown_names),
                rank=rank,
                features=features,
            )
        )
    return asked


@dataclass(frozen=True)
class Reach:
    decision: str
    answered_right: int  # ranked questions answered, of `ranked`
    ranked: int
    hit_at_3: float
    mrr: float
    none_when_unanswerable: float


def reach(asked: list[Question], accept: np.ndarray, decision: str) -> Reach:
    """The figures when the decision accepts `accept` (one flag per question in
    `decided(asked)`, in order)."""
    flags = dict(zip(map(id, decided(asked)), accept.tolist(), strict=True))
    answerable = [q for q in asked if q.answerable]
    unanswerable = [q for q in asked if not q.answerable]
    ranks = []
    for q in answerable:
        given = q.exact or flags.get(id(q), False)
        ranks.append(q.rank if given and q.rank is not None and q.rank <= TOP else None)
    offered = sum(q.exact or flags.get(id(q), False) for q in unanswerable)
    ranked = [q for q in decided(asked) if q.answerable and q.rank is not None and q.rank <= TOP]
    return Reach(
        decision=decision,
        answered_right=sum(flags[id(q)] for q in ranked),
        ranked=len(ranked),
        hit_at_3=sum(r is not None for r in ranks) / len(answerable),
        mrr=sum(1 / r for r in ranks if r) / len(answerable),
        none_when_unanswerable=1 - offered / len(unanswerable) if unanswerable else 1.0,
    )


def decided(asked: list[Question]) -> list[Question]:
    """The questions a decision decides: no exact hit, a similar candidate, no name the
    library does not know (those are refused whatever the decision)."""
    return [q for q in asked if not q.exact and q.features and not q.unknown_name]


def _matrix(asked: list[Question]) -> np.ndarray:
    return np.array([[q.features[f] for f in FEATURES] for q in decided(asked)])  # type: ignore[index]


def _allowed_offers(asked: list[Question]) -> int:
    """How many of the decided unanswerable questions may be answered at NONE_TARGET."""
    unanswerable = [q for q in asked if not q.answerable]
    offered_anyway = sum(q.exact for q in unanswerable)
    return math.floor((1 - NONE_TARGET) * len(unanswerable) + 1e-9) - offered_anyway


def _kept(reaches: list[Reach]) -> Reach:
    floor = NONE_TARGET - 1e-9
    meeting = [r for r in reaches if r.none_when_unanswerable >= floor]
    return max(meeting, key=lambda r: (r.hit_at_3, r.mrr))


def best_pair(asked: list[Question]) -> Reach:
    """The best "a >= s or b >= t" over every pair of features and thresholds."""
    x = _matrix(asked)
    allowed = _allowed_offers(asked)
    bad = np.array([not q.answerable for q in decided(asked)])
    results = []
    for a, b in itertools.combinations(range(len(FEATURES)), 2):
        for s in np.unique(x[:, a]):
            for t in np.unique(x[:, b]):
                accept = (x[:, a] >= s) | (x[:, b] >= t)
                if (accept & bad).sum() <= allowed:
                    name = f"{FEATURES[a]} >= {s:.3f} or {FEATURES[b]} >= {t:.3f}"
                    results.append(reach(asked, accept, name))
    return _kept(results)


def best_logistic(asked: list[Question]) -> Reach:
    """A logistic regression of every feature (answerable and ranked vs unanswerable),
    over a few penalties and class weights, cut where NONE_TARGET holds."""
    x = _matrix(asked)
    x = (x - x.mean(axis=0)) / np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    x = np.c_[x, np.ones(len(x))]
    questions = decided(asked)
    good = np.array([q.answerable and q.rank is not None and q.rank <= TOP for q in questions])
    bad = np.array([not q.answerable for q in questions])
    used = good | bad
    allowed = _allowed_offers(asked)
    results = []
    for penalty, bad_weight in itertools.product((0.01, 0.1, 1.0, 10.0), (1, 3, 5, 10)):
        weights = np.zeros(x.shape[1])
        sample = np.where(bad, bad_weight, 1.0) * used
        for _ in range(5000):
            p = 1 / (1 + np.exp(-x @ weights))
            gradient = x.T @ ((p - good) * sample) / used.sum()
            gradient[:-1] += penalty * weights[:-1] / used.sum()
            weights -= 0.5 * gradient
        score = x @ weights
        offers = np.sort(score[bad])[::-1]
        cut = offers[allowed] if allowed < len(offers) else -np.inf
        name = f"logistic regression of all ten (penalty {penalty}, weight {bad_weight})"
        results.append(reach(asked, score > cut, name))
    return _kept(results)


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.test.utils import setup_databases, teardown_databases

    from tests.search_quality.evaluate import case_id_of, index_library, load_library, load_queries

    cases, queries = load_library(), load_queries()
    old = setup_databases(verbosity=0, interactive=False)
    try:
        index_library(cases)
        asked = ask(queries, {case_id_of(c["key"]): c["key"] for c in cases})
    finally:
        teardown_databases(old, verbosity=0)
    ranked_all = [q for q in asked if q.answerable and q.rank is not None and q.rank <= TOP]
    answerable = sum(q.answerable for q in asked)
    decides = decided(asked)
    print(
        f"{len(asked)} questions, {answerable} answerable, a right case among the first "
        f"{TOP} before any decision for {len(ranked_all)} "
        f"(hit@{TOP} {len(ranked_all) / answerable:.3f}). The decision decides "
        f"{len(decides)}, {sum(not q.answerable for q in decides)} of them without an "
        f"answer, of which at most {_allowed_offers(asked)} may be answered.\n"
    )
    print("| decision, fitted on the questions it is scored on | ranked ones answered |", end="")
    print(" hit@3 | MRR | NONE |\n|---|---|---|---|---|")
    for found in (best_pair(asked), best_logistic(asked)):
        print(
            f"| {found.decision} | {found.answered_right} of {found.ranked} | "
            f"{found.hit_at_3:.3f} | {found.mrr:.3f} | {found.none_when_unanswerable:.3f} |"
        )


if __name__ == "__main__":
    main()
