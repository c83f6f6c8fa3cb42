"""Benchmark entry point: `python -m tests.bench.run --scale small|medium|full`.

Generates the data set (unless --skip-generate), serves the real app under gunicorn and
loads it with wrk beside a bare floor view, measures scoring through a real qcluster,
rescore against the read limit, the admin at 10,000 sessions and at scale, and peak
memory; prints one table and writes bench-results/bench-<scale>-<timestamp>.json.

It TRUNCATEs the app's tables of the database it is given: the database name must
contain "bench" (or pass --allow-any-database).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from tests.bench import procs

DEFAULT_DATABASE_URL = "mysql://root@127.0.0.1:3306/diagnosis_bench"
RESULTS = procs.ROOT / "bench-results"
STEPS = (
    "load",
    "tokens",
    "scoring",
    "opinion",
    "rescore",
    "admin",
    "export",
    "search",
    "search_milvus",
    "otlp",
)


@dataclass(frozen=True)
class Scale:
    name: str
    sessions: int
    feedback_pool: int
    load_seconds: float
    warmup_seconds: float
    latency_count: int
    drain_count: int
    buffer_pool_mb: int | None
    drain_variants: tuple[str, ...]
    admin_loads: int
    rounds: int


DRAIN_VARIANTS: dict[str, dict[str, str]] = {
    # The configured defaults (config/settings.py): what the target is held to.
    "orm, defaults": {},
    # Successes stored, as before Q_SAVE_LIMIT=-1 became the default: the monitor locks
    # and reads the kept successes for every task.
    "orm, save_limit=200": {"Q_SAVE_LIMIT": "200"},
    "redis, defaults": {"Q_REDIS_URL": "redis://127.0.0.1:6379/11"},
}
ALL_VARIANTS = tuple(DRAIN_VARIANTS)
MEDIUM_VARIANTS = ("orm, defaults", "redis, defaults")

SCALES = {
    # Three rounds even in the smoke run: one 2-second round took a single stall of the
    # machine for the endpoint's figure (first useful 0.72 x its floor, p99 232 ms,
    # where the next runs gave 0.94 x).
    "small": Scale("small", 10_000, 16_000, 2, 1, 100, 1_000, None, ("orm, defaults",), 3, 3),
    "medium": Scale("medium", 100_000, 30_000, 4, 1, 200, 10_000, 2_048, MEDIUM_VARIANTS, 5, 3),
    "full": Scale("full", 1_000_000, 30_000, 6, 2, 200, 10_000, 8_192, ALL_VARIANTS, 5, 3),
}


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", flush=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.run", description=__doc__)
    parser.add_argument("--scale", choices=SCALES, default="small")
    parser.add_argument("--sessions", type=int, help="body sessions (overrides the scale's)")
    parser.add_argument(
        "--skip-generate", action="store_true", help="reuse the data set already loaded"
    )
    parser.add_argument(
        "--only",
        default=",".join(STEPS),
        help=f"comma-separated steps to run, of: {', '.join(STEPS)}",
    )
    parser.add_argument("--seconds", type=float, help="length of each measured wrk run")
    parser.add_argument(
        "--rounds", type=int, help="measured runs per endpoint, each between floors"
    )
    parser.add_argument(
        "--buffer-pool-mb",
        type=int,
        help="set innodb_buffer_pool_size for the run (restored afterwards); "
        "0 leaves it alone. Default: the scale's",
    )
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers")
    parser.add_argument("--drain-variants", help="semicolon-separated; default: the scale's")
    parser.add_argument(
        "--search-cases",
        type=int,
        help="case library size for the search step (default 1,000 at small, else 100,000)",
    )
    parser.add_argument(
        "--otlp-requests", type=int, default=60, help="512-span batches per OTLP run"
    )
    parser.add_argument("--allow-any-database", action="store_true")
    options = parser.parse_args(argv)
    options.only = {step.strip() for step in options.only.split(",") if step.strip()}
    unknown = options.only - set(STEPS)
    if unknown:
        parser.error(f"unknown steps: {', '.join(sorted(unknown))}")
    return options


def child_env() -> dict[str, str]:
    """The environment of every process the benchmark starts (server, workers, commands)."""
    env = dict(os.environ)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(
        {
            "DEBUG": "0",
            "SECRET_KEY": os.environ.get("SECRET_KEY")
            or "bench-only-secret-key-not-for-production-0123456789abcdef",
            "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
            "SECURE_SSL_REDIRECT": "0",
            # Production configuration: the rate limiter on, at a limit the load stays
            # under (it is measured, not hit).
            "FEEDBACK_RATE_LIMIT": "5000/s",
            "Q_SYNC": "0",
            "Q_CLUSTER_NAME": "diagnosis-bench",
            # Opinions are measured in their own step (tests/bench/opinion.py); the other
            # steps measure the rule scoring alone, as before there were opinions.
            "OPINION_PROVIDER": "off",
            "LOG_LEVEL": os.environ.get("LOG_LEVEL") or "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


@contextlib.contextmanager
def indexer_running() -> Iterator[None]:
    """The index lease held for the load runs, as the worker's indexer holds it in
    production: a first `useful` then asks whether an indexer runs (one read, as its
    floor does) instead of queueing one for every case, which only a service with no
    worker does. The indexer's own cost is measured in the search step."""
    from datetime import timedelta

    from django.utils import timezone

    from caselibrary.models import CaseIndexState

    CaseIndexState.objects.get_or_create(id=1)
    CaseIndexState.objects.filter(id=1).update(building_since=timezone.now() + timedelta(days=1))
    try:
        yield
    finally:
        CaseIndexState.objects.filter(id=1).update(building_since=None)


def setup_django(options: argparse.Namespace) -> None:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    url = urlparse(os.environ["DATABASE_URL"])
    name = url.path.rsplit("/", 1)[-1]
    if "bench" not in name and not options.allow_any_database:
        raise SystemExit(
            f"refusing to run on database {name!r}: the benchmark truncates its tables; "
            "use a database whose name contains 'bench' (or --allow-any-database)"
        )
    os.environ.update(child_env())
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.bench.settings"
    if url.scheme.startswith(("mysql", "mariadb")):
        _create_mysql_database(url, name)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _create_mysql_database(url: Any, name: str) -> None:
    import MySQLdb

    connection = MySQLdb.connect(
        host=url.hostname or "127.0.0.1",
        port=url.port or 3306,
        user=url.username or "root",
        passwd=url.password or "",
    )
    try:
        connection.cursor().execute(
            f"CREATE DATABASE IF NOT EXISTS `{name}` "
            "CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
        )
    finally:
        connection.close()


def database_info() -> dict[str, Any]:
    from django.db import connection

    info: dict[str, Any] = {"vendor": connection.vendor, "name": connection.settings_dict["NAME"]}
    if connection.vendor == "mysql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT VERSION(), @@innodb_buffer_pool_size, @@innodb_flush_log_at_trx_commit"
            )
            version, pool, flush = cursor.fetchone()
        info.update(
            version=version,
            innodb_buffer_pool_mb=int(pool) // (1024 * 1024),
            innodb_flush_log_at_trx_commit=int(flush),
        )
    return info


def set_buffer_pool(mb: int) -> int | None:
    """Resize the (dynamic) InnoDB buffer pool; returns the previous size in MB."""
    from django.db import connection

    if connection.vendor != "mysql" or not mb:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@innodb_buffer_pool_size")
        previous = int(cursor.fetchone()[0]) // (1024 * 1024)
        if previous != mb:
            cursor.execute(f"SET GLOBAL innodb_buffer_pool_size = {int(mb) * 1024 * 1024}")
            _wait_for_resize(cursor)
    return previous


def _wait_for_resize(cursor: Any) -> None:
    for _ in range(600):
        cursor.execute("SHOW STATUS LIKE 'Innodb_buffer_pool_resize_status'")
        row = cursor.fetchone()
        if not row or not row[1] or "complete" in row[1].lower() or "finished" in row[1].lower():
            return
        time.sleep(0.5)


def warm_tables() -> None:
    """Read the tables once so the first measured run does not pay for disk reads."""
    from django.db import connection

    with connection.cursor() as cursor:
        for sql in (
            "SELECT COUNT(*), SUM(LENGTH(answer)) FROM diagnosis_session",
            "SELECT COUNT(*), SUM(hit_count) FROM tool_invocation",
            "SELECT COUNT(*) FROM tool_invocation FORCE INDEX (uniq_invocation_per_session)",
            "SELECT COUNT(*), SUM(LENGTH(solution)) FROM case_library",
        ):
            cursor.execute(sql)
            cursor.fetchall()


def wait_for_purge(*, below: int = 1_000, timeout: float = 600) -> float:
    """Wait until InnoDB has purged what resetting the pools left behind (the undo history
    of hundreds of thousands of changed rows): purge threads working through it compete
    with the first measured runs. Seconds waited; 0 where there is no such metric."""
    from django.db import connection

    if connection.vendor != "mysql":
        return 0.0
    started = time.monotonic()
    sql = "SELECT count FROM information_schema.INNODB_METRICS WHERE name = 'trx_rseg_history_len'"
    with connection.cursor() as cursor:
        while True:
            cursor.execute(sql)
            row = cursor.fetchone()
            if row is None or row[0] < below or time.monotonic() - started > timeout:
                break
            time.sleep(1)
    waited = time.monotonic() - started
    log(f"InnoDB purge caught up in {waited:.0f} s (history {row[0] if row else '-'})")
    return round(waited, 1)


class Benchmark:
    def __init__(self, options: argparse.Namespace) -> None:
        from tests.bench.dataset import pools_for

        self.options = options
        self.scale = SCALES[options.scale]
        self.sessions = options.sessions or self.scale.sessions
        self.stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.logs = RESULTS / "logs" / f"{self.scale.name}-{self.stamp}"
        self.logs.mkdir(parents=True, exist_ok=True)
        scoring_pool = self.scale.latency_count + self.scale.drain_count
        self.pools = pools_for(feedback_pool=self.scale.feedback_pool, scoring_pool=scoring_pool)
        self.env = child_env()
        self.results: dict[str, Any] = {
            "scale": {
                "name": self.scale.name,
                "body_sessions": self.sessions,
                "pools": {name: asdict(pool) for name, pool in self.pools.items()},
            },
            "started_at": self.stamp,
        }

    # --- generation and the 10k reference -------------------------------------------

    def generate(self) -> None:
        from tests.bench import dataset

        log(f"generating {self.sessions:,} sessions (+ pools)")
        report = dataset.generate(
            sessions=self.sessions,
            pools=self.pools,
            at_reference=self.measure_reference,
            log=log,
        )
        self.results["generation"] = {
            **asdict(report),
            "sessions_per_second": round(report.sessions / report.seconds, 1),
            "invocations_per_second": round(report.invocations / report.seconds, 1),
        }
        log(
            f"generated {report.sessions:,} sessions, {report.invocations:,} invocations, "
            f"{report.cases:,} cases in {report.seconds:.0f} s"
        )

    def measure_reference(self) -> None:
        """Figures at 10,000 sessions, taken while generating (see dataset.generate)."""
        import json

        from tests.bench import admin, scoring

        log("measuring the 10,000-session reference (admin, rescore)")
        reference: dict[str, Any] = {"measured_at": datetime.now(UTC).isoformat()}
        if "admin" in self.options.only:
            pages = admin.measure(loads=self.scale.admin_loads)
            reference["admin"] = [asdict(p) for p in pages]
        if "rescore" in self.options.only:
            reference["rescore"] = scoring.rescore(env=self.env, log=self.logs / "rescore-10k.log")
        self.results["reference_10k"] = reference
        (RESULTS / f"reference-10k-{self._db_name()}.json").write_text(
            json.dumps(reference, indent=2, default=str)
        )

    def load_reference(self) -> None:
        import json

        path = RESULTS / f"reference-10k-{self._db_name()}.json"
        if path.exists():
            self.results["reference_10k"] = {
                **json.loads(path.read_text()),
                "reused_from": str(path.relative_to(procs.ROOT)),
            }
            log(f"reusing the 10,000-session reference from {path.name}")

    def _db_name(self) -> str:
        from django.db import connection

        return str(connection.settings_dict["NAME"])

    # --- load -------------------------------------------------------------------------

    def api_key(self) -> str:
        from diagnosis.models import ApiKey

        ApiKey.objects.filter(name__startswith="bench-").delete()
        _, key = ApiKey.objects.create_key(name=f"bench-{self.stamp}", scope="full")
        return key

    def load(self) -> None:
        from tests.bench import load

        seconds = self.options.seconds or self.scale.load_seconds
        rounds = self.options.rounds or self.scale.rounds
        runs = load.specs(self.pools, body_sessions=self.sessions, warmup_share=0.15)
        # Each endpoint against its floor: the bare UPDATE; for the first useful, the same
        # writes in the plainest Django (lock the session, save it, create the case); for
        # not_useful also the same conditional UPDATE in the plainest Django; for batches
        # of 100, the bare bulk_create of the same rows.
        pairs = [
            ("feedback_not_useful", "floor"),
            ("feedback_not_useful_same_work", "not_useful_floor"),
            ("feedback_first_useful", "useful_floor"),
            ("feedback_repeat_useful", "floor"),
            ("invocations_batch_1", "floor"),
            ("invocations_batch_100", "bulk_create_floor_100"),
            ("session_get", "floor"),
        ]
        key = self.api_key()
        results: dict[str, Any] = {}
        floor_runs: dict[str, list[dict[str, Any]]] = {
            "floor": [],
            "not_useful_floor": [],
            "useful_floor": [],
            "bulk_create_floor_100": [],
        }
        wrk_log = self.logs / "wrk.log"
        # The web workers' metrics in a multiprocess directory, as under gunicorn in
        # production.
        metrics_dir = self.logs / "metrics"
        metrics_dir.mkdir(parents=True, exist_ok=True)
        env = {**self.env, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
        with (
            indexer_running(),
            procs.gunicorn(
                env=env, workers=self.options.workers, log=self.logs / "gunicorn.log"
            ) as server,
        ):
            self.results["server"] = {
                "gunicorn_workers": self.options.workers,
                "worker_class": "sync",
                "wrk_threads": 2,
                "wrk_connections": self.options.connections,
                "seconds_per_run": seconds,
                "rounds": rounds,
                "warmup_seconds": self.scale.warmup_seconds,
            }

            def wrk(spec: Any, name: str, run_seconds: float) -> dict[str, Any]:
                nonce = uuid.uuid4().hex[:8]
                result = load.run_wrk(
                    spec,
                    url=server.url,
                    key=key,
                    seconds=run_seconds,
                    threads=2,
                    connections=self.options.connections,
                    nonce=nonce,
                    log=wrk_log,
                )
                problems = result.problems(unique=spec.unique)
                data = {**asdict(result), "valid": result.valid and not problems}
                data["problems"] = problems
                log(
                    f"  {name:24} {result.rps:8,.0f} rps  p50 {result.p50_ms:6.1f} ms  "
                    f"p99 {result.p99_ms:6.1f} ms"
                    + (f"  {result.rows_per_second:,.0f} rows/s" if result.rows_per_second else "")
                    + (f"  PROBLEMS: {'; '.join(problems)}" if problems else "")
                )
                return data

            # The load from other work on a shared machine drifts: each endpoint runs in
            # rounds, each round between two floor runs, and its ratio is the median of
            # the rounds' ratios to the floor beside them.
            for name, floor_name in pairs:
                warm, measured = runs[name]
                floor_warm, floor_measured = runs[floor_name]
                wrk(floor_warm, f"{floor_name} (warm-up)", self.scale.warmup_seconds)
                wrk(warm, f"{name} (warm-up)", self.scale.warmup_seconds)
                slices = load.rounds_of(measured, rounds)
                floor_slices = load.rounds_of(floor_measured, rounds + 1)
                floors = [wrk(floor_slices[0], floor_name, seconds)]
                endpoint = []
                for n in range(rounds):
                    endpoint.append(wrk(slices[n], name, seconds))
                    floors.append(wrk(floor_slices[n + 1], floor_name, seconds))
                floor_runs[floor_name] += floors
                results[name] = load.combine(endpoint, floors, seconds=seconds)
            workers = server.workers()
            peaks = [procs.peak_rss_kb(pid) for pid in workers]
        for floor_name, collected in floor_runs.items():
            results[floor_name if floor_name != "floor" else "floor_combined"] = {
                "rps": round(statistics.mean(f["rps"] for f in collected), 1),
                "p50_ms": round(statistics.median(f["p50_ms"] for f in collected), 2),
                "p99_ms": round(statistics.median(f["p99_ms"] for f in collected), 2),
                "rows_per_second": round(
                    statistics.mean(f["rows_per_second"] or 0 for f in collected), 1
                ),
                "valid": all(f["valid"] for f in collected),
                "runs": collected,
                "note": "every run of this floor (rps: mean; latency: median)",
            }
        self.results["load"] = results
        self.results.setdefault("memory", {})["web_worker_peak_rss_mb"] = [
            round(kb / 1024, 1) for kb in peaks if kb
        ]

    # --- feedback token vs API key ------------------------------------------------------

    def tokens(self) -> None:
        from tests.bench import tokens

        log("POST /api/feedback: feedback token vs API key")
        self.results["tokens"] = tokens.run(
            pools=self.pools,
            env=self.env,
            logs=self.logs,
            key=self.api_key(),
            seconds=self.options.seconds or self.scale.load_seconds,
            warmup_seconds=self.scale.warmup_seconds,
            rounds=self.options.rounds or self.scale.rounds,
            workers=self.options.workers,
            connections=self.options.connections,
            log=log,
        )

    # --- scoring ----------------------------------------------------------------------

    def scoring(self) -> None:
        from django.conf import settings

        from tests.bench import dataset, scoring

        pool = self.pools["scoring"]
        runner = scoring.Scoring(pool=pool, env=self.env, logs=self.logs)
        out: dict[str, Any] = {
            "poll_seconds": settings.Q_CLUSTER["poll"],
            "q_cluster": {k: v for k, v in settings.Q_CLUSTER.items() if k != "redis"},
            "latency_method": (
                "finished_at (stamped by the completing transaction, enqueued on its commit) "
                "to updated_at (stamped by the scoring UPDATE); ORM broker, 2 workers"
            ),
        }
        log(f"scoring latency: {self.scale.latency_count} completions over time")
        latency = runner.latency(
            count=self.scale.latency_count, spread_ms=50, extra_env={"Q_WORKERS": "2"}
        )
        out["latency"] = asdict(latency)
        log(f"  p50 {latency.p50_ms} ms, p99 {latency.p99_ms} ms ({latency.scored} scored)")
        variants = (
            [v.strip() for v in self.options.drain_variants.split(";")]
            if self.options.drain_variants
            else list(self.scale.drain_variants)
        )
        out["drain_target_variant"] = "orm, defaults"
        out["drains"] = []
        for variant in variants:
            dataset.scoring_reset(pool)
            log(f"scoring drain ({variant}): {self.scale.drain_count:,} completions")
            drain = runner.drain(
                variant=variant,
                start=self.scale.latency_count,
                count=self.scale.drain_count,
                extra_env={"Q_WORKERS": "2", **DRAIN_VARIANTS[variant]},
                timeout=max(120, self.scale.drain_count / 20),
            )
            out["drains"].append(asdict(drain))
            log(
                f"  {drain.per_second:,.0f}/s over the writes, {drain.wall_per_second:,.0f}/s "
                f"with start-up (enqueue {drain.enqueue_per_second:,.0f}/s)"
            )
        self.results["scoring"] = {**self.results.get("scoring", {}), **out}

    def opinion(self) -> None:
        from tests.bench import dataset, opinion

        pool = self.pools["scoring"]
        dataset.scoring_reset(pool)
        count = self.scale.drain_count
        log(f"opinion drain (heuristic): {count:,} completions scored, then their opinions")
        result = opinion.drain(
            pool=pool,
            env=self.env,
            logs=self.logs,
            start=self.scale.latency_count,
            count=count,
            timeout=max(180, count / 10),
        )
        out: dict[str, Any] = {"drain": opinion.as_dict(result)}
        log(
            f"  {result.opinions_per_second:,.0f} opinions/s, rule scores "
            f"{result.rules_per_second:,.0f}/s in the same cluster"
        )
        # Set-based over every scored session; bounded to the scales where it is quick.
        if self.sessions <= 100_000:
            log("rescore --opinion --all (heuristic)")
            out["set_based"] = opinion.set_based(
                env=self.env, log=self.logs / "rescore-opinion.log"
            )
            log(f"  {out['set_based']['per_second']:,.0f} opinions/s")
        self.results["opinion"] = out

    def rescore(self) -> None:
        from diagnosis.models import DiagnosisSession
        from evaluation.services import SCORABLE_STATUSES
        from tests.bench import scoring

        log("rescore --all vs the bare aggregate read")
        first, groups = scoring.read_limit_seconds()
        result = scoring.rescore(env=self.env, log=self.logs / "rescore.log")
        second, _ = scoring.read_limit_seconds()
        result["sessions"] = DiagnosisSession.objects.filter(status__in=SCORABLE_STATUSES).count()
        read = (first + second) / 2
        self.results.setdefault("scoring", {}).update(
            rescore=result,
            read_limit_seconds=round(read, 2),
            read_limit_runs=[round(first, 2), round(second, 2)],
            read_limit_groups=groups,
        )
        memory = self.results.setdefault("memory", {})
        memory["rescore_peak_rss_mb"] = result["peak_rss_mb"]
        ref = self.results.get("reference_10k", {}).get("rescore")
        if ref:
            memory["rescore_peak_rss_mb_at_10k"] = ref["peak_rss_mb"]
        log(f"  rescore {result['seconds']} s, read {read:.1f} s, RSS {result['peak_rss_mb']} MB")

    # --- admin ------------------------------------------------------------------------

    def admin(self) -> None:
        from tests.bench import admin

        log("admin pages at scale")
        pages = admin.measure(loads=self.scale.admin_loads)
        self.results["admin"] = {
            "at_scale": [asdict(p) for p in pages],
            "at_10k": self.results.get("reference_10k", {}).get("admin", []),
        }

    # --- search -----------------------------------------------------------------------

    def search(self) -> None:
        from tests.bench import search

        # Every case's passages are embedded when indexed (a few cases a second on one
        # core): the small scale keeps that to minutes.
        cases = self.options.search_cases or (1_000 if self.scale.name == "small" else 100_000)
        log(f"case search at {cases:,} cases")
        self.results["search"] = search.run(
            env=self.env,
            logs=self.logs,
            cases=cases,
            seconds=self.options.seconds or self.scale.load_seconds,
            rounds=self.options.rounds or self.scale.rounds,
        )

    # --- search on the Milvus backend (BENCH_MILVUS_URI, else Milvus Lite) -------------

    def search_milvus(self) -> None:
        from tests.bench import search_milvus

        cases = self.options.search_cases or (10_000 if self.scale.name == "small" else 100_000)
        self.results["search_milvus"] = search_milvus.run(cases=cases)

    # --- OTLP ingest --------------------------------------------------------------------

    def otlp(self) -> None:
        from tests.bench import otlp

        log("OTLP ingest: 512-span protobuf batches against the decode + bulk insert floor")
        self.results["otlp"] = otlp.run(
            env=self.env,
            logs=self.logs,
            key=self.api_key(),
            workers=self.options.workers,
            requests=self.options.otlp_requests,
            rounds=self.options.rounds or self.scale.rounds,
        )

    # --- all --------------------------------------------------------------------------

    def run(self) -> Path:
        from tests.bench import dataset, report

        self.results["machine"] = report.machine()
        self.results["references"] = report.REFERENCES
        self.results["git"] = report.git_commit()
        wanted = self.options.buffer_pool_mb
        if wanted is None:
            wanted = self.scale.buffer_pool_mb or 0
        previous = set_buffer_pool(wanted)
        try:
            if self.options.skip_generate:
                self.load_reference()
            else:
                self.generate()
            dataset.cleanup_temp()
            dataset.pools_reset(self.pools)
            self.results["database"] = database_info()
            self.results["rows"] = dataset.counts()
            self.results["settings"] = self.settings_used()
            warm_tables()
            self.results["purge_wait_seconds"] = wait_for_purge()
            if "load" in self.options.only:
                self.load()
            if "tokens" in self.options.only:
                self.tokens()
            if "scoring" in self.options.only:
                self.scoring()
            if "opinion" in self.options.only:
                self.opinion()
            if "rescore" in self.options.only:
                self.rescore()
            if "admin" in self.options.only:
                self.admin()
            if "export" in self.options.only:
                from tests.bench import export

                log("exports")
                self.results["exports"] = export.run(env=self.env, logs=self.logs)
            if "search" in self.options.only:
                self.search()
            if "search_milvus" in self.options.only:
                self.search_milvus()
            if "otlp" in self.options.only:
                self.otlp()
        finally:
            if previous is not None and previous != wanted:
                set_buffer_pool(previous)
                self.results.setdefault("database", {})["innodb_buffer_pool_mb_restored_to"] = (
                    previous
                )
            procs.stop_all()
        rows, summary = report.targets(self.results)
        self.results["targets"] = summary
        self.results["finished_at"] = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        table = report.render(rows)
        self.results["table"] = table
        path = RESULTS / f"bench-{self.scale.name}-{self.stamp}.json"
        report.write_json(self.results, path)
        print()
        print(
            f"Benchmark, scale {self.scale.name}: {self.results['rows']['diagnosis_session']:,} "
            f"sessions, {self.results['rows']['tool_invocation']:,} tool invocations "
            f"({self.results['database'].get('version', self.results['database']['vendor'])}, "
            f"buffer pool {self.results['database'].get('innodb_buffer_pool_mb', '-')} MB)"
        )
        print(table)
        print(f"\nJSON: {path.relative_to(procs.ROOT)}")
        return path

    def settings_used(self) -> dict[str, Any]:
        from django.conf import settings

        db = settings.DATABASES["default"]
        return {
            "DJANGO_SETTINGS_MODULE (server)": "tests.bench.settings",
            "CONN_MAX_AGE": db.get("CONN_MAX_AGE"),
            "CONN_HEALTH_CHECKS": db.get("CONN_HEALTH_CHECKS"),
            # Production configuration: the rate limiter on, at a limit the load stays
            # under (it is measured, not hit).
            "FEEDBACK_RATE_LIMIT": "5000/s",
            "DEBUG": settings.DEBUG,
            "LOG_LEVEL": self.env["LOG_LEVEL"],
            "Q_CLUSTER": {k: v for k, v in settings.Q_CLUSTER.items() if k != "redis"},
        }


def main(argv: list[str] | None = None) -> int:
    options = parse_args(sys.argv[1:] if argv is None else argv)
    procs.install_handlers()
    setup_django(options)
    try:
        Benchmark(options).run()
    except KeyboardInterrupt:
        log("interrupted: every process the benchmark started has been stopped")
        return 130
    finally:
        procs.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
