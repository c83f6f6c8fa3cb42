"""The Milvus search backend's cost: `python -m tests.bench.search_milvus --cases 10000`.

Also the `search_milvus` step of `python -m tests.bench.run`. The library is made of the
demo generator's questions and answers, split into passages as the indexer splits cases,
written through MilvusBackend.replace in the indexer's batches; then each of the
lexical, dense and hybrid searches is timed for as many questions, one after another,
from this process (the client's time included: what a web worker waits).

The server is BENCH_MILVUS_URI (and BENCH_MILVUS_TOKEN) when set: a Milvus server, whose
figures are the ones to size a deployment with. Otherwise Milvus Lite is started as a
server in a temporary directory: pure Python, for tests; its figures say the backend
works at this size, not how fast a Milvus server is.

The vectors are random unit vectors: the engine's cost does not depend on what they
mean, and embedding a question costs the same on every backend (the search step measures
it). Random vectors are HNSW's hardest case (no clusters), so the dense figures are an
upper bound.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

BATCH_CASES = 64  # caselibrary.services.index_pass.INDEX_BATCH: cases per indexer pass
DEPTH = 50  # settings.CASE_SEARCH_DEPTH: passages each ranking contributes


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def _timings(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(_percentile(values, 0.50), 1),
        "p99_ms": round(_percentile(values, 0.99), 1),
        "mean_ms": round(statistics.fmean(values), 1),
    }


def _unit(rng: np.random.Generator) -> np.ndarray:
    vector = rng.normal(size=_dim()).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _dim() -> int:
    from caselibrary.embedding import EMBEDDING_DIM

    return EMBEDDING_DIM


def library(cases: int, rng: np.random.Generator) -> list[list[Any]]:
    """`cases` cases as lists of IndexedPassage, split as the indexer splits them."""
    from caselibrary.passages import case_passages
    from caselibrary.search_backends.base import IndexedPassage
    from caselibrary.search_text import search_terms
    from feedback.demo.sessions import demo_sessions

    made: list[list[Any]] = []
    chunk = 0
    while len(made) < cases:
        for session in demo_sessions(10_000, seed=20_261_204 + chunk):
            if not session.answer or len(made) >= cases:
                continue
            case_id = str(uuid.uuid4())
            parts = case_passages(
                title=session.query[:100], root_cause=session.answer, solution=session.answer
            )
            made.append(
                [
                    IndexedPassage(
                        passage_id=f"{case_id}:{n}",
                        case_pk=case_id,
                        kind=part.kind,
                        text=part.text,
                        terms=search_terms(part.text),
                        vector=_unit(rng),
                    )
                    for n, part in enumerate(parts)
                ]
            )
        chunk += 1
    return made


def questions(count: int) -> list[str]:
    from feedback.demo.sessions import demo_sessions

    return [session.query for session in demo_sessions(count, seed=7_777)][:count]


def run(*, cases: int, queries: int = 200) -> dict[str, Any]:
    from caselibrary.search_backends.milvus import MilvusBackend
    from caselibrary.search_text import search_terms
    from tests.milvus_server import milvus_lite_server

    rng = np.random.default_rng(20_261_204)
    with ExitStack() as stack:
        uri = os.environ.get("BENCH_MILVUS_URI", "")
        if uri:
            server = f"Milvus server at {uri}"
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            uri = stack.enter_context(milvus_lite_server(directory / "data"))
            server = f"Milvus Lite {version('milvus-lite')} (pure Python, a test server)"
        backend = MilvusBackend(
            uri=uri,
            token=os.environ.get("BENCH_MILVUS_TOKEN", ""),
            collection="bench_case_passages",
            timeout=120,
        )
        log(f"milvus search at {cases:,} cases on {server}")
        backend.clear()
        made = library(cases, rng)
        passages = sum(len(parts) for parts in made)
        started = time.perf_counter()
        for start in range(0, len(made), BATCH_CASES):
            batch = made[start : start + BATCH_CASES]
            backend.replace(
                [parts[0].case_pk for parts in batch], [p for parts in batch for p in parts]
            )
        load_seconds = time.perf_counter() - started
        # A server seals and indexes segments by size and time on its own; Milvus Lite
        # searches rows it has not flushed by brute force in Python. Flushed, both search
        # their indexes.
        started = time.perf_counter()
        backend.flush()
        flush_seconds = time.perf_counter() - started
        log(f"  {passages:,} passages written in {load_seconds:.1f} s")

        asked = [(search_terms(q), _unit(rng)) for q in questions(queries)]
        timed: dict[str, list[float]] = {"lexical": [], "dense": [], "hybrid": []}
        for terms, vector in asked[:10]:  # warm-up: connections, caches
            backend.hybrid(terms, vector, DEPTH, 60)
        for terms, vector in asked:
            for name, call in (
                ("lexical", lambda t=terms: backend.lexical(t, DEPTH)),
                ("dense", lambda v=vector: backend.dense(v, DEPTH)),
                ("hybrid", lambda t=terms, v=vector: backend.hybrid(t, v, DEPTH, 60)),
            ):
                started = time.perf_counter()
                call()
                timed[name].append((time.perf_counter() - started) * 1000)
        both = [a + b for a, b in zip(timed["lexical"], timed["dense"], strict=True)]
        result = {
            "server": server,
            "cases": cases,
            "passages": passages,
            "queries": len(asked),
            "depth": DEPTH,
            "load_seconds": round(load_seconds, 1),
            "load_passages_per_second": round(passages / load_seconds),
            "flush_seconds": round(flush_seconds, 1),
            "lexical": _timings(timed["lexical"]),
            "dense": _timings(timed["dense"]),
            "hybrid": _timings(timed["hybrid"]),
            "lexical_then_dense": _timings(both),
            "count_after": backend.count(),
        }
        backend.drop()
    return result


def rows(result: dict[str, Any] | None, check: Any) -> list[Any]:
    """Table rows for report.py (no target: a backend check and a sizing figure)."""
    from tests.bench.report import Row

    if not result:
        return []
    out = [
        Row(
            f"milvus backend: write ({result['cases']:,} cases, {result['passages']:,} passages)",
            f"{result['load_passages_per_second']:,} passages/s through replace()",
            result["server"],
        )
    ]
    labels = {
        "lexical": "lexical (BM25)",
        "dense": "dense (HNSW)",
        "hybrid": "hybrid_search (RRF)",
        "lexical_then_dense": "lexical, then dense",
    }
    for name, label in labels.items():
        timing = result[name]
        out.append(
            Row(
                f"  milvus {label}, top {result['depth']}",
                f"p50 {timing['p50_ms']} ms, p99 {timing['p99_ms']} ms",
                f"{result['queries']} questions, one at a time",
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.search_milvus")
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-0123456789abcdef")
    import django

    django.setup()
    from tests.bench.report import render

    result = run(cases=options.cases, queries=options.queries)
    print(render(rows(result, None)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
