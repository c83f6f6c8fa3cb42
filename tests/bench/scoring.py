"""Scoring through a real `manage.py qcluster`: latency, burst drain, and rescore --all.

Latency is read from the rows themselves: `finished_at` is stamped by the completing
transaction (the task is enqueued when it commits) and `updated_at` by the scoring
UPDATE, both by the app's clock on this machine; nothing is polled for it.

`python -m tests.bench.scoring enqueue ...` completes pool sessions through the real
service (so the task is enqueued after commit, by whichever broker the environment
configures); the benchmark runs it as a subprocess so each broker variant gets its own
settings.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.bench import procs
from tests.bench.dataset import Pool

ANSWER = "根因：连接池耗尽。\n1. 扩容连接池\n2. 加熔断"


def enqueue_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--start", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--spread-ms", type=float, default=0.0)
    options = parser.parse_args(argv)

    import django

    django.setup()
    from diagnosis.services import session_complete

    rng = random.Random(options.start)
    started = time.monotonic()
    for n in range(options.start, options.start + options.count):
        session_complete(
            session_id=f"{options.prefix}{n:0{options.width}d}", status="SUCCESS", answer=ANSWER
        )
        if options.spread_ms:
            time.sleep(rng.uniform(0, 2 * options.spread_ms) / 1000)
    elapsed = time.monotonic() - started
    print(json.dumps({"count": options.count, "seconds": elapsed}))


@dataclass
class DrainResult:
    variant: str
    settings: dict[str, str]
    count: int
    enqueue_seconds: float
    enqueue_per_second: float
    wall_seconds: float
    write_span_seconds: float
    per_second: float
    wall_per_second: float
    complete: bool


@dataclass
class LatencyResult:
    count: int
    scored: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    poll_seconds: float


class Scoring:
    def __init__(self, *, pool: Pool, env: dict[str, str], logs: Path) -> None:
        self.pool = pool
        self.env = {**env, "Q_SYNC": "0"}
        self.logs = logs

    def _range(self, start: int, count: int) -> tuple[str, str]:
        return self.pool.session_id(start), self.pool.session_id(start + count - 1)

    def _enqueue(
        self,
        start: int,
        count: int,
        *,
        env: dict[str, str],
        spread_ms: float = 0,
        processes: int = 1,
    ) -> dict[str, float]:
        """Complete pool sessions [start, start + count) in `processes` parallel clients."""
        width = str(len(self.pool.session_id(0)) - len(self.pool.prefix))
        share = -(-count // processes)
        running = []
        began = time.monotonic()
        for n in range(processes):
            first = start + n * share
            size = min(share, start + count - first)
            if size <= 0:
                break
            args = procs.python(
                "-m",
                "tests.bench.scoring",
                "enqueue",
                "--prefix",
                self.pool.prefix,
                "--width",
                width,
                "--start",
                str(first),
                "--count",
                str(size),
                "--spread-ms",
                str(spread_ms),
            )
            running.append(procs.start(args, env=env, log=self.logs / "enqueue.log"))
        failed = [process for process in running if process.wait() != 0]
        for process in running:
            procs.forget(process)
        if failed:
            raise RuntimeError(f"enqueue failed; see {self.logs / 'enqueue.log'}")
        return {"count": count, "seconds": time.monotonic() - began}

    def _scored(self, start: int, count: int) -> int:
        from django.db import connection

        low, high = self._range(start, count)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM diagnosis_session WHERE session_id BETWEEN %s AND %s "
                "AND self_evaluation IS NOT NULL",
                [low, high],
            )
            return cursor.fetchone()[0]

    def _latencies_ms(self, start: int, count: int) -> list[float]:
        from diagnosis.models import DiagnosisSession

        low, high = self._range(start, count)
        rows = DiagnosisSession.objects.filter(
            session_id__range=(low, high), self_evaluation__isnull=False
        ).values_list("finished_at", "updated_at")
        return sorted((updated - finished).total_seconds() * 1000 for finished, updated in rows)

    def _write_span(self, start: int, count: int) -> float:
        from django.db.models import Max, Min

        from diagnosis.models import DiagnosisSession

        low, high = self._range(start, count)
        span = DiagnosisSession.objects.filter(
            session_id__range=(low, high), self_evaluation__isnull=False
        ).aggregate(first=Min("updated_at"), last=Max("updated_at"))
        return (span["last"] - span["first"]).total_seconds()

    def _cluster(self, env: dict[str, str], name: str):  # type: ignore[no-untyped-def]
        return procs.start(
            procs.python("manage.py", "qcluster"), env=env, log=self.logs / f"qcluster-{name}.log"
        )

    def _wait(self, start: int, count: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._scored(start, count) >= count:
                return True
            time.sleep(0.25)
        return False

    def latency(self, *, count: int, spread_ms: float, extra_env: dict[str, str]) -> LatencyResult:
        """`count` completions spread over time while a 2-worker qcluster runs."""
        env = {**self.env, **extra_env}
        cluster = self._cluster(env, "latency")
        try:
            time.sleep(3)  # let the cluster start its workers before the clock matters
            self._enqueue(0, count, env=env, spread_ms=spread_ms)
            began = time.monotonic()
            self._wait(0, count, timeout=60)
            polled = time.monotonic() - began
        finally:
            procs.stop(cluster)
        values = self._latencies_ms(0, count)
        if not values:
            return LatencyResult(count, 0, 0, 0, 0, 0, polled)
        return LatencyResult(
            count=count,
            scored=len(values),
            p50_ms=round(statistics.median(values), 1),
            p90_ms=round(values[int(0.90 * (len(values) - 1))], 1),
            p99_ms=round(values[int(0.99 * (len(values) - 1))], 1),
            max_ms=round(values[-1], 1),
            poll_seconds=round(polled, 1),
        )

    def drain(
        self, *, variant: str, start: int, count: int, extra_env: dict[str, str], timeout: float
    ) -> DrainResult:
        """Enqueue `count` completions with no worker running, then start one and time it."""
        env = {**self.env, **extra_env}
        enqueued = self._enqueue(start, count, env=env, processes=2)
        began = time.monotonic()
        cluster = self._cluster(env, variant.replace(" ", "_"))
        try:
            complete = self._wait(start, count, timeout=timeout)
            wall = time.monotonic() - began
        finally:
            procs.stop(cluster)
        span = self._write_span(start, count) if self._scored(start, count) else 0.0
        scored = self._scored(start, count)
        return DrainResult(
            variant=variant,
            settings=extra_env,
            count=count,
            enqueue_seconds=round(enqueued["seconds"], 2),
            enqueue_per_second=round(count / enqueued["seconds"], 1),
            wall_seconds=round(wall, 2),
            write_span_seconds=round(span, 2),
            per_second=round(scored / span, 1) if span else 0.0,
            wall_per_second=round(scored / wall, 1),
            complete=complete,
        )


def read_limit_seconds() -> tuple[float, int]:
    """One aggregate over tool_invocation grouped by session, streamed to the client.

    The same counts the scoring query computes, for every session: no scoring can read
    its facts faster than this.
    """
    from django.db import connection

    from evaluation.selectors import _FACT_COLUMNS

    sql = f"SELECT t.session_id, {_FACT_COLUMNS} FROM tool_invocation t GROUP BY t.session_id"
    if connection.vendor == "mysql":
        import MySQLdb.cursors

        connection.ensure_connection()
        raw = connection.connection
        started = time.monotonic()
        cursor = raw.cursor(MySQLdb.cursors.SSCursor)
        cursor.execute(sql)
        rows = 0
        while True:
            chunk = cursor.fetchmany(10_000)
            if not chunk:
                break
            rows += len(chunk)
        cursor.close()
        return time.monotonic() - started, rows
    started = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute(sql)
        rows = 0
        while chunk := cursor.fetchmany(10_000):
            rows += len(chunk)
    return time.monotonic() - started, rows


def rescore(*, env: dict[str, str], log: Path, extra: tuple[str, ...] = ()) -> dict[str, float]:
    """`manage.py rescore --all` as its own process: seconds and peak RSS."""
    status, seconds, rss_kb = procs.run_measured(
        procs.python("manage.py", "rescore", "--all", "--no-progress", *extra), env=env, log=log
    )
    if status != 0:
        raise RuntimeError(f"rescore failed with {status}; see {log}")
    # The command's own clock leaves out interpreter and Django start-up (a second or
    # two, whatever the size of the data set).
    reported = re.findall(r"Scored (\d+) session\(s\) in ([\d.]+)s", log.read_text())
    if not reported:  # its summary reworded: the wall clock would pass for the command's
        raise RuntimeError(f"rescore printed no summary line; see {log}")
    return {
        "seconds": round(float(reported[-1][1]), 2),
        "wall_seconds": round(seconds, 2),
        "peak_rss_mb": round(rss_kb / 1024, 1),
    }


def as_dict(result: object) -> dict:
    return asdict(result)  # type: ignore[call-overload]


if __name__ == "__main__":
    if sys.argv[1:2] == ["enqueue"]:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        enqueue_main(sys.argv[2:])
    else:
        raise SystemExit("usage: python -m tests.bench.scoring enqueue --prefix ...")
