"""Search quality on the labelled questions: `python -m tests.search_quality.evaluate`.

The library is the demo one (feedback/demo/cases.json) plus, where present, the Markdown
runbooks of tests/search_quality/runbooks/ read as cases (caselibrary.runbooks); the
questions (queries.json, and runbook_queries.json when present), in Chinese and English,
each list the cases that answer them (none for a fifth: questions the library has no case
for). The cases are written to a throwaway database and indexed by the service's own
indexer, and each question asked as the API asks it (caselibrary.search_engine), so the
figures are the service's.

hit@k: share of answerable questions with a right case among the first k hits. MRR: mean
of 1/rank of the first right case (0 when none). Answered: share of answerable questions
given at least one hit. NONE-when-unanswerable: share of the no-answer questions answered
with no hit at all (a wrong case offered to an operator is the failure it counts).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent
CASES = ROOT / "feedback" / "demo" / "cases.json"
QUERIES = HERE / "queries.json"
RUNBOOK_QUERIES = HERE / "runbook_queries.json"
RUNBOOKS = HERE / "runbooks"
TOP = 3
_NAMESPACE = uuid.UUID("5b0c3c52-1f0e-4d8a-9c1e-3a1f2b9d7e11")


def case_id_of(key: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, key))


def load_cases(path: Path = CASES) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def load_runbook_cases(directory: Path = RUNBOOKS) -> list[dict]:
    """Each runbook as a case: its description and root cause as the root cause, its
    solution and every other section (as Markdown sections) as the solution."""
    if not directory.is_dir():
        return []
    from caselibrary.runbooks import case_error_code, case_texts, read_runbook

    cases = []
    for path in sorted(directory.glob("*.md")):
        book = read_runbook(path, source=path.name)
        # The texts the import writes (caselibrary.runbooks.case_texts).
        cause, solution = case_texts(book)
        cases.append(
            {
                "key": path.stem,
                "title": book.title,
                "error_code": case_error_code(book),
                "fault_category": "GENERAL",
                "root_cause": cause or book.title,
                "solution": solution or cause or book.title,
            }
        )
    return cases


def load_library() -> list[dict]:
    return load_cases() + load_runbook_cases()


def load_queries(*paths: Path) -> list[dict]:
    paths = paths or tuple(p for p in (QUERIES, RUNBOOK_QUERIES) if p.exists())
    queries: list[dict] = []
    for path in paths:
        queries += json.loads(path.read_text(encoding="utf-8"))
    return queries


def index_library(cases: Iterable[dict]) -> int:
    """Write `cases` as case rows (ids from their keys) and index them; needs a database."""
    from caselibrary.models import CaseLibrary, SourceType
    from caselibrary.services.index import case_index_build

    CaseLibrary.objects.bulk_create(
        [
            CaseLibrary(
                case_id=case_id_of(case["key"]),
                source_type=SourceType.MANUAL,
                fault_category=case.get("fault_category") or "GENERAL",
                error_code=case.get("error_code"),
                title=case["title"][:255],
                root_cause=case["root_cause"],
                solution=case["solution"],
            )
            for case in cases
        ]
    )
    return case_index_build()


@dataclass
class Asked:
    """One question, what it expects, and the top candidate's features."""

    query: dict
    hits: list[str]  # case keys returned, in order
    top_cosine: float | None
    top_coverage: float | None
    top_peak: float | None
    top_right: bool
    top_exact: bool
    # The question names something no case mentions (no L1 hit then).
    unknown_name: bool = False


@dataclass
class Quality:
    questions: int = 0
    answerable: int = 0
    no_answer: int = 0
    hit_at_1: float = 0.0
    hit_at_3: float = 0.0
    mrr: float = 0.0
    answered: float = 0.0
    none_when_unanswerable: float = 0.0
    misses: list[str] = field(default_factory=list)

    def row(self) -> str:
        return (
            f"{self.questions} | {self.hit_at_1:.3f} | {self.hit_at_3:.3f} | {self.mrr:.3f} | "
            f"{self.answered:.3f} | {self.none_when_unanswerable:.3f}"
        )


def ask_all(queries: list[dict], keys_by_id: dict[str, str]) -> list[Asked]:
    """Ask every question through the search engine (decision included)."""
    from caselibrary.search_engine import L0, rank_cases

    asked = []
    for item in queries:
        ranked = rank_cases(query=item["query"], limit=TOP)
        expected = set(item["expect"])
        top = next((c for c in ranked.candidates if c.match_level != L0), None)
        asked.append(
            Asked(
                query=item,
                hits=[keys_by_id.get(hit.case_id, hit.case_id) for hit in ranked.hits],
                top_cosine=top.cosine if top else None,
                top_coverage=top.coverage if top else None,
                top_peak=top.peak if top else None,
                top_right=bool(top and keys_by_id.get(top.case_id) in expected),
                top_exact=any(c.match_level == L0 for c in ranked.candidates),
                unknown_name=bool(ranked.unknown_names),
            )
        )
    return asked


def score(asked: list[Asked]) -> Quality:
    ranks: list[int | None] = []
    rejected = offered = 0
    misses = []
    for item in asked:
        expected = set(item.query["expect"])
        if not expected:
            if item.hits:
                offered += 1
                misses.append(f"no-answer question found {item.hits[0]}: {item.query['query']}")
            else:
                rejected += 1
            continue
        rank = next((n for n, key in enumerate(item.hits, start=1) if key in expected), None)
        ranks.append(rank)
        if rank is None:
            misses.append(f"missed {sorted(expected)} (got {item.hits}): {item.query['query']}")
    answerable = len(ranks)
    answered = sum(bool(a.hits) for a in asked if a.query["expect"])
    return Quality(
        questions=len(asked),
        answerable=answerable,
        no_answer=rejected + offered,
        hit_at_1=_share(sum(r == 1 for r in ranks), answerable),
        hit_at_3=_share(sum(r is not None and r <= TOP for r in ranks), answerable),
        mrr=statistics.fmean([1 / r if r else 0.0 for r in ranks]) if ranks else 0.0,
        answered=_share(answered, answerable),
        none_when_unanswerable=_share(rejected, rejected + offered),
        misses=misses,
    )


def by_kind(asked: list[Asked]) -> dict[str, Quality]:
    kinds: dict[str, list[Asked]] = defaultdict(list)
    for item in asked:
        kinds[item.query.get("kind", "other")].append(item)
    return {kind: score(items) for kind, items in sorted(kinds.items())}


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def table(asked: list[Asked]) -> str:
    lines = [
        "| questions | n | hit@1 | hit@3 | MRR | answered | NONE when unanswerable |",
        "|---|---|---|---|---|---|---|",
        f"| all | {score(asked).row()} |",
    ]
    lines += [f"| {kind} | {quality.row()} |" for kind, quality in by_kind(asked).items()]
    return "\n".join(lines)


def evaluate_in_test_database(queries: list[dict], cases: list[dict]) -> list[Asked]:
    """Set up a throwaway test database, index `cases`, ask `queries`, tear it down."""
    from django.test.utils import setup_databases, teardown_databases

    old = setup_databases(verbosity=0, interactive=False)
    try:
        index_library(cases)
        return ask_all(queries, {case_id_of(c["key"]): c["key"] for c in cases})
    finally:
        teardown_databases(old, verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="list the questions it got wrong")
    parser.add_argument("--dump", type=Path, help="write every question's features (JSON)")
    options = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings

    cases, queries = load_library(), load_queries()
    asked = evaluate_in_test_database(queries, cases)
    print(
        f"{len(cases)} cases, {len(queries)} questions, backend {settings.CASE_SEARCH_BACKEND}, "
        f"model {settings.CASE_EMBEDDING_MODEL}\n"
    )
    print(table(asked))
    if options.misses:
        print("\n" + "\n".join(score(asked).misses))
    if options.dump:
        options.dump.write_text(
            json.dumps(
                [
                    {
                        "kind": a.query.get("kind"),
                        "answerable": bool(a.query["expect"]),
                        "exact": a.top_exact,
                        "right": a.top_right,
                        "cosine": a.top_cosine,
                        "coverage": a.top_coverage,
                        "peak": a.top_peak,
                        "unknown_name": a.unknown_name,
                    }
                    for a in asked
                ]
            )
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
