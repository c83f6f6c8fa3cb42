"""Case search benchmark: `POST /api/cases/search` against the bare engine (the database's
full-text query, the query embedding and the dense ranking, on the same index, in one
run); the indexer's throughput, serving RSS, and a raw SQL insert's time to its first hit
through another process at a given library size.

    python -m tests.bench.search --cases 100000            # index, load, compare
    python -m tests.bench.search --cases 1000 --build-only

Also the `search` step of `python -m tests.bench.run`. The library is topped up to the
asked size with cases made from the demo generator's questions and answers (as `useful`
would make them, some with an error code), marked `created_by='bench-search'` so a rerun
reuses them. The database name must contain "bench".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tests.bench import procs

BENCH_USER = "bench-search"
FLOOR_PREFIX = "bsearch-floor-"
FLOOR_WIDTH = 6
FLOOR_SESSIONS = 2_000
INSERT_BATCH = 5_000
# Cases made by the demo generator; beyond these, copies (see _copy_up).
DISTINCT_CASES = 100_000
BARE_REPEATS = 3
LUA = Path(__file__).resolve().parent / "wrk" / "search.lua"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- the library ---------------------------------------------------------------------


def top_up(cases: int) -> int:
    """Add generated cases until the library holds `cases`; returns how many were added."""
    from django.db import connection

    from caselibrary.error_codes import find_error_codes
    from caselibrary.models import CaseLibrary
    from feedback.demo.sessions import demo_sessions

    have = CaseLibrary.objects.count()
    missing = cases - have
    if missing <= 0:
        return 0
    if have >= DISTINCT_CASES:
        return _copy_up(cases, have)
    log(f"adding {missing:,} generated cases to the {have:,} there are")
    sql = (
        "INSERT INTO case_library (case_id, diagnosis_id, source_type, fault_category, "
        "error_code, title, root_cause, solution, created_by, updated_by, created_at, "
        "updated_at) VALUES (%s, NULL, 'AUTO', 'GENERAL', %s, %s, %s, %s, %s, %s, NOW(6), "
        "NOW(6))"
    )
    added, chunk = 0, 0
    while added < missing:
        rows = []
        # Each chunk its own seed: another 10,000 questions and answers, other numbers,
        # hosts and services in them, as a growing library has.
        for session in demo_sessions(10_000, seed=20_261_203 + have + chunk):
            if not session.answer or added + len(rows) >= missing:
                continue
            codes = find_error_codes(session.answer)
            rows.append(
                (
                    str(uuid.uuid4()),
                    codes[0][:64] if codes and len(rows) % 3 == 0 else None,
                    session.query[:100],
                    session.answer,
                    session.answer,
                    BENCH_USER,
                    BENCH_USER,
                )
            )
        chunk += 1
        with connection.cursor() as cursor:
            for start in range(0, len(rows), INSERT_BATCH):
                cursor.executemany(sql, rows[start : start + INSERT_BATCH])
        added += len(rows)
        log(f"  {have + added:,} cases")
        if have + added >= DISTINCT_CASES and cases > DISTINCT_CASES:
            return added + _copy_up(cases, have + added)
    return added


def _copy_up(cases: int, have: int) -> int:
    """Past DISTINCT_CASES, the generator is too slow for a million: the rest are copies
    of generated cases, each with a host name of its own in its title and root cause, so
    the vocabulary keeps growing with the library (one new term per case: more than a
    real library adds, which makes the memory figures pessimistic)."""
    from django.db import connection

    log(f"copying generated cases up to {cases:,} (from {have:,})")
    sql = (
        "INSERT INTO case_library (case_id, diagnosis_id, source_type, fault_category, "
        "error_code, title, root_cause, solution, created_by, updated_by, created_at, "
        "updated_at) VALUES (%s, NULL, 'AUTO', 'GENERAL', %s, %s, %s, %s, %s, %s, NOW(6), "
        "NOW(6))"
    )
    copied, last = 0, ""
    with connection.cursor() as cursor:
        while have + copied < cases:
            cursor.execute(
                "SELECT case_id, error_code, title, root_cause, solution FROM case_library "
                "WHERE created_by = %s AND case_id > %s ORDER BY case_id LIMIT %s",
                [BENCH_USER, last, INSERT_BATCH],
            )
            source = cursor.fetchall()
            if not source:
                last = ""
                continue
            last = source[-1][0]
            rows = []
            for _case_id, code, title, root_cause, solution in source[: cases - have - copied]:
                host = f"node-{have + copied + len(rows):07d}"
                rows.append(
                    (
                        str(uuid.uuid4()),
                        code,
                        f"{title[:80]} on {host}",
                        f"{host}: {root_cause}",
                        solution,
                        BENCH_USER,
                        BENCH_USER,
                    )
                )
            cursor.executemany(sql, rows)
            copied += len(rows)
            if copied % 100_000 < INSERT_BATCH:
                log(f"  {have + copied:,} cases")
    return copied


def floor_sessions() -> None:
    from diagnosis.models import DiagnosisSession

    if DiagnosisSession.objects.filter(session_id__startswith=FLOOR_PREFIX).exists():
        return
    DiagnosisSession.objects.bulk_create(
        [
            DiagnosisSession(
                session_id=f"{FLOOR_PREFIX}{n:0{FLOOR_WIDTH}d}", query="floor", status="RUNNING"
            )
            for n in range(FLOOR_SESSIONS)
        ],
        batch_size=1000,
    )


def queries() -> list[str]:
    """The labelled quality set's questions (exact codes, paraphrases, no-answer ones)."""
    from tests.search_quality.evaluate import load_queries

    return [item["query"] for item in load_queries()]


# --- measurements ----------------------------------------------------------------------


def build(*, env: dict[str, str], log_path: Path) -> dict[str, Any]:
    """Index every waiting case (the top-up's inserts, marked by the triggers) in a
    process of its own, as the worker's indexer does: its time and peak RSS."""
    from caselibrary.models import CaseChange
    from caselibrary.services.index import cases_mark_for_reindex

    cases_mark_for_reindex(everything=False)  # vectors of another model, from an earlier run
    waiting = CaseChange.objects.values("case_id").distinct().count()
    status, seconds, peak_kb = procs.run_measured(
        procs.python("manage.py", "case_index", "--build"), env=env, log=log_path
    )
    if status != 0:
        raise RuntimeError(f"indexing failed; see {log_path}")
    return {
        "cases": waiting,
        "seconds": round(seconds, 1),
        "cases_per_second": round(waiting / seconds, 2) if seconds and waiting else None,
        "peak_rss_mb": round(peak_kb / 1024, 1),
    }


def serving_rss(*, env: dict[str, str], log_path: Path) -> dict[str, Any]:
    """A process that loads the vectors and answers every quality query: its peak RSS."""
    status, seconds, peak_kb = procs.run_measured(
        procs.python("-m", "tests.bench.search", "--answer-queries"), env=env, log=log_path
    )
    if status != 0:
        raise RuntimeError(f"serving probe failed; see {log_path}")
    return {"peak_rss_mb": round(peak_kb / 1024, 1), "seconds": round(seconds, 1)}


def _percentiles(samples: list[float]) -> dict[str, Any]:
    samples = sorted(samples)
    return {
        "samples": len(samples),
        "p50_ms": round(statistics.median(samples), 3),
        "p99_ms": round(samples[max(0, int(len(samples) * 0.99) - 1)], 3),
    }


def bare(texts: list[str]) -> dict[str, Any]:
    """The engine alone on the same index, in this process: the full-text query of the
    database (terms made up front), the query embedding, and the exact dense ranking
    over the vectors in memory (vectors made up front)."""
    from caselibrary.embedding import embed_query
    from caselibrary.search_backends.base import get_backend
    from caselibrary.search_engine import uncommon_terms
    from caselibrary.search_glossary import counterparts
    from caselibrary.search_text import search_terms

    backend = get_backend("database")
    terms = [search_terms(t) for t in texts]
    # What the service asks the full-text engine: the question's terms and the glossary
    # words it adds (reported beside the bare query; the target is read on the bare one).
    sent = [" ".join([t, *uncommon_terms(counterparts(t.split()))]) for t in terms]
    vectors = [embed_query(t) for t in texts]  # warm: the model is loaded
    backend.vectors()  # loaded once, as a serving process does
    lexical, lexical_sent, embedding, dense = [], [], [], []
    for _ in range(BARE_REPEATS):
        for text, words, asked, vector in zip(texts, terms, sent, vectors, strict=True):
            started = time.perf_counter()
            backend.lexical(words, 50)
            lexical.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            backend.lexical(asked, 50)
            lexical_sent.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            embed_query(text)
            embedding.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            backend.dense(vector, 50)
            dense.append((time.perf_counter() - started) * 1000)
    return {
        "lexical": _percentiles(lexical),
        "lexical_with_glossary": _percentiles(lexical_sent),
        "embedding": _percentiles(embedding),
        "dense": _percentiles(dense),
        "passages": len(backend.vectors()),
    }


def _search(url: str, key: str, query: str, timeout: float) -> list[dict[str, Any]]:
    import urllib.request

    request = urllib.request.Request(
        f"{url}/api/cases/search",
        data=json.dumps({"query": query}).encode(),
        headers={"Authorization": f"Api-Key {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())["hits"]


def warm_up(url: str, key: str, workers: int) -> float:
    """Search until every web worker has loaded the model, the vectors and (on
    MariaDB/MySQL) the term index: rounds of one request per worker at once, until a
    round answers within a second. A worker's first search over 100,000 cases takes tens
    of seconds (a fixed-length wrk warm-up let it spill into the measured runs). Returns
    the seconds it took."""
    from concurrent.futures import ThreadPoolExecutor

    started = time.monotonic()
    texts = queries()
    with ThreadPoolExecutor(workers) as pool:
        for attempt in range(60):
            began = time.monotonic()
            asked = [texts[(attempt * workers + n) % len(texts)] for n in range(workers)]
            list(pool.map(lambda text: _search(url, key, text, timeout=600), asked))
            if time.monotonic() - began < 1:
                break
    return round(time.monotonic() - started, 1)


def insert_to_first_hit(*, env: dict[str, str], logs: Path, tries: int = 5) -> dict[str, Any]:
    """A case inserted by plain SQL in this process, searched through the API of another
    (gunicorn) with the indexer running in a third (qcluster): seconds to its first hit."""

    from django.db import connection

    from caselibrary.models import CaseIndexState
    from diagnosis.models import ApiKey

    ApiKey.objects.filter(name="bench-insert").delete()
    _, key = ApiKey.objects.create_key(name="bench-insert", scope="agent")
    worker = procs.start(procs.python("manage.py", "qcluster"), env=env, log=logs / "qcluster.log")
    took: list[float] = []
    try:
        with procs.gunicorn(env=env, workers=2, log=logs / "gunicorn-insert.log") as server:
            deadline = time.monotonic() + 120
            while not CaseIndexState.objects.filter(building_since__isnull=False).exists():
                if time.monotonic() > deadline:
                    raise RuntimeError("the indexer did not start; see qcluster.log")
                time.sleep(0.5)

            warm_up(server.url, key, workers=2)

            def found(title: str) -> bool:
                hits = _search(server.url, key, title, timeout=10)
                return any(h["title"] == title and h["matchLevel"] == "L0" for h in hits)

            for n in range(tries):
                title = f"bench insert {uuid.uuid4().hex[:12]} 订单服务 {n}"
                with connection.cursor() as cursor:
                    started = time.monotonic()
                    cursor.execute(
                        "INSERT INTO case_library (case_id, source_type, fault_category, title,"
                        " root_cause, solution, created_by, updated_by, created_at, updated_at)"
                        " VALUES (%s, 'MANUAL', 'GENERAL', %s, %s, %s, %s, %s, NOW(6), NOW(6))",
                        [str(uuid.uuid4()), title, f"根因 {title}", f"处理 {title}"]
                        + [BENCH_USER] * 2,
                    )
                while not found(title):
                    if time.monotonic() - started > 60:
                        raise RuntimeError("an inserted case was not found within 60 s")
                    time.sleep(0.05)
                took.append(time.monotonic() - started)
    finally:
        procs.stop(worker)
    return {
        "tries": len(took),
        "p50_s": round(statistics.median(took), 2),
        "max_s": round(max(took), 2),
    }


def load(
    *,
    env: dict[str, str],
    logs: Path,
    seconds: float,
    rounds: int,
    workers: int = 2,
    connections: int = 16,
) -> dict[str, Any]:
    """wrk on POST /api/cases/search, each round between two runs of the floor.

    Twice: with one connection per worker, so a request never waits behind another and
    its latency is what it costs (the p50 target is read here); and with 16 connections,
    the throughput run the other endpoints are measured with, where the latency is mostly
    queueing and grows with the cost of every request alike.
    """
    from diagnosis.models import ApiKey
    from tests.bench import load as wrk_load

    ApiKey.objects.filter(name="bench-search").delete()
    _, key = ApiKey.objects.create_key(name="bench-search", scope="agent")
    bodies = logs / "search-bodies.txt"
    bodies.write_text(
        "".join(json.dumps({"query": q, "limit": 5}, ensure_ascii=False) + "\n" for q in queries())
    )
    search_spec = wrk_load.LoadSpec(
        "case_search", "search.lua", "", 1, 1, unique=False, extra={"BODIES": str(bodies)}
    )
    floor_spec = wrk_load.LoadSpec(
        "floor", "floor.lua", FLOOR_PREFIX, FLOOR_WIDTH, FLOOR_SESSIONS, unique=False
    )
    out: dict[str, Any] = {}
    with procs.gunicorn(
        env=env,
        workers=workers,
        log=logs / "gunicorn-search.log",
    ) as server:

        def run(spec: Any, run_seconds: float, clients: int) -> dict[str, Any]:
            result = wrk_load.run_wrk(
                spec,
                url=server.url,
                key=key,
                seconds=run_seconds,
                threads=min(2, clients),
                connections=clients,
                nonce=uuid.uuid4().hex[:8],
                log=logs / "wrk-search.log",
            )
            data = {**asdict(result), "valid": result.valid}
            log(
                f"  {spec.name:12} c={clients:<3} {result.rps:8,.0f} rps  "
                f"p50 {result.p50_ms:6.2f} ms  p99 {result.p99_ms:6.2f} ms"
                + ("" if result.valid else "  INVALID")
            )
            return data

        # Warm-up: every worker loads the model, embeds the reference sentences and loads
        # the vectors before anything is measured.
        out["warm_up_seconds"] = warm_up(server.url, key, workers)
        log(f"  web workers warm after {out['warm_up_seconds']} s")
        run(search_spec, 8, connections)
        for name, clients in (("latency", workers), ("throughput", connections)):
            runs: dict[str, list[dict[str, Any]]] = {"case_search": [], "floor": []}
            runs["floor"].append(run(floor_spec, seconds, clients))
            for _ in range(rounds):
                runs["case_search"].append(run(search_spec, seconds, clients))
                runs["floor"].append(run(floor_spec, seconds, clients))
            out[name] = {
                "connections": clients,
                "case_search": _summary(runs["case_search"]),
                "floor": _summary(runs["floor"]),
                "runs": runs,
            }
        peaks = [procs.peak_rss_kb(pid) for pid in server.workers()]
    out["web_worker_peak_rss_mb"] = [round(kb / 1024, 1) for kb in peaks if kb]
    return out


def _summary(collected: list[dict[str, Any]]) -> dict[str, Any]:
    # A round that answered nothing (a stall of the shared database, say) has no latency to
    # read: averaging its zeros in made the floor look fast and the target miss. It is left
    # out of the figures and counted, so the row still says the run was not clean.
    valid = [r for r in collected if r["valid"]] or collected
    return {
        "rps": round(statistics.mean(r["rps"] for r in valid), 1),
        "p50_ms": round(statistics.median(r["p50_ms"] for r in valid), 3),
        "p99_ms": round(statistics.median(r["p99_ms"] for r in valid), 3),
        "valid": all(r["valid"] for r in collected),
        "invalid_runs": len(collected) - len([r for r in collected if r["valid"]]),
    }


def run(
    *,
    env: dict[str, str],
    logs: Path,
    cases: int,
    seconds: float,
    rounds: int,
    build_only: bool = False,
) -> dict[str, Any]:
    """Everything above at one library size."""
    from caselibrary.models import CaseLibrary

    added = top_up(cases)
    floor_sessions()
    log(f"indexing the waiting cases ({CaseLibrary.objects.count():,} in the library)")
    built = build(env=env, log_path=logs / "case-index-build.log")
    total = CaseLibrary.objects.count()
    log(
        f"  {built['cases']:,} cases in {built['seconds']} s "
        f"({built['cases_per_second']} cases/s), peak RSS {built['peak_rss_mb']} MB"
    )
    served = serving_rss(env=env, log_path=logs / "case-search-serve.log")
    log(f"  a process answering queries: peak RSS {served['peak_rss_mb']} MB")
    result: dict[str, Any] = {"cases": total, "added": added, "build": built, "serving": served}
    if build_only:
        return result
    result["bare"] = b = bare(queries())
    log(
        f"  bare: full-text p50 {b['lexical']['p50_ms']} ms, query embedding p50 "
        f"{b['embedding']['p50_ms']} ms, dense p50 {b['dense']['p50_ms']} ms "
        f"({b['passages']:,} passages)"
    )
    result["load"] = load(env=env, logs=logs, seconds=seconds, rounds=rounds)
    latency = result["load"]["latency"]
    search, floor = latency["case_search"], latency["floor"]
    engine = b["lexical"]["p50_ms"] + b["embedding"]["p50_ms"] + b["dense"]["p50_ms"]
    limit = 2 * engine + floor["p50_ms"]
    result["target_p50_ms"] = round(limit, 2)
    result["ratio_p50"] = round(search["p50_ms"] / limit, 3) if limit else None
    result["insert_to_hit"] = hit = insert_to_first_hit(env=env, logs=logs)
    log(f"  raw SQL insert to first hit: p50 {hit['p50_s']} s, max {hit['max_s']} s")
    return result


def rows(search: dict[str, Any] | None, check: Any) -> list[Any]:
    """Table rows for report.py (`check(key, ratio, limit, at_most=...)` gives pass/miss)."""
    from tests.bench.report import Row

    if not search:
        return []
    built = search["build"]
    out = [
        Row(
            f"case indexer ({built['cases']:,} cases, {search['cases']:,} in the library)",
            f"{built['seconds']} s ({built['cases_per_second']} cases/s), "
            f"peak RSS {built['peak_rss_mb']} MB",
            "embedding every passage; one process",
            "",
            "",
            "",
        ),
        Row(
            f"  serving RSS ({search['cases']:,} cases)",
            f"{search['serving']['peak_rss_mb']} MB",
            "a process that loads the vectors and answers queries",
            "",
            "<= 400 MB",
            check("case_search_serving_rss", search["serving"]["peak_rss_mb"], 400, at_most=True),
        ),
    ]
    if "load" in search:
        b = search["bare"]
        for name in ("latency", "throughput"):
            run = search["load"][name]
            s, f = run["case_search"], run["floor"]
            latency = name == "latency"
            out.append(
                Row(
                    f"POST /api/cases/search, {run['connections']} connections"
                    + ("" if s["valid"] else " INVALID"),
                    f"{s['rps']:,.0f} rps, p50 {s['p50_ms']:.2f} / p99 {s['p99_ms']:.2f} ms",
                    (
                        f"bare full-text p50 {b['lexical']['p50_ms']:.3f} / p99 "
                        f"{b['lexical']['p99_ms']:.3f} ms, query embedding p50 "
                        f"{b['embedding']['p50_ms']:.3f} / p99 {b['embedding']['p99_ms']:.3f} "
                        f"ms, dense p50 {b['dense']['p50_ms']:.3f} ms; full-text with the "
                        f"glossary's words p50 {b['lexical_with_glossary']['p50_ms']:.3f} ms; "
                        if latency
                        else ""
                    )
                    + f"floor {f['rps']:,.0f} rps, p50 {f['p50_ms']:.2f} ms",
                    f"{search['ratio_p50']:.2f} x (2 x bare + floor) p50"
                    if latency
                    else f"{s['rps'] / f['rps']:.2f} x floor rps",
                    "<= 1 x" if latency else "",
                    check("case_search_p50", search["ratio_p50"], 1.0, at_most=True)
                    if latency
                    else "",
                )
            )
        peaks = search["load"]["web_worker_peak_rss_mb"]
        out.append(
            Row(
                "  web worker peak RSS after search load",
                f"{max(peaks, default=0)} MB",
                "",
                "",
                "<= 400 MB",
                check("case_search_worker_rss", max(peaks, default=0), 400, at_most=True),
            )
        )
    if "insert_to_hit" in search:
        hit = search["insert_to_hit"]
        out.append(
            Row(
                "raw SQL insert to first hit (another process's API, indexer in qcluster)",
                f"p50 {hit['p50_s']} s, max {hit['max_s']} s ({hit['tries']} inserts)",
                "",
                "",
                "<= 5 s",
                check("case_insert_to_hit", hit["max_s"], 5.0, at_most=True),
            )
        )
    return out


# --- command line ----------------------------------------------------------------------


def _answer_queries() -> None:
    """The serving probe: map the current index and answer every quality question."""
    import django

    django.setup()
    from caselibrary.selectors import cases_find

    for text in queries():
        cases_find(query=text, limit=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.search", description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--answer-queries", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--allow-any-database", action="store_true")
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if options.answer_queries:
        _answer_queries()
        return 0
    from tests.bench import run as bench_run

    procs.install_handlers()
    bench_run.setup_django(options)
    logs = bench_run.RESULTS / "logs" / f"search-{time.strftime('%Y%m%dT%H%M%S')}"
    logs.mkdir(parents=True, exist_ok=True)
    try:
        result = run(
            env=bench_run.child_env(),
            logs=logs,
            cases=options.cases,
            seconds=options.seconds,
            rounds=options.rounds,
            build_only=options.build_only,
        )
    finally:
        procs.stop_all()
    from tests.bench import report

    summary: dict[str, Any] = {}

    def check(key: str, ratio: float | None, limit: float, *, at_most: bool) -> str:
        ok = None if ratio is None else (ratio <= limit if at_most else ratio >= limit)
        summary[key] = {"ratio": ratio, "limit": limit, "ok": ok}
        return report.verdict(ok)

    print(report.render(rows(result, check)))
    path = bench_run.RESULTS / f"search-{options.cases}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    report.write_json({"search": result, "targets": summary, "machine": report.machine()}, path)
    print(f"\nJSON: {path.relative_to(procs.ROOT)}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.exit(main())
