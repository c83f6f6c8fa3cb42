"""HTTP load runs with wrk against the real app under gunicorn, floor included."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.bench.dataset import BODY_PREFIX, BODY_WIDTH, POOL_WIDTH, Pool

LUA_DIR = Path(__file__).resolve().parent / "wrk"
WRK = shutil.which("wrk") or "/usr/bin/wrk"


@dataclass(frozen=True)
class LoadSpec:
    name: str
    script: str
    prefix: str
    width: int
    count: int
    # Walk a slice that never repeats (first useful, not_useful)?
    unique: bool
    extra: dict[str, str] = field(default_factory=dict)
    # Invocations per request, for rows/s.
    rows_per_request: int = 1


@dataclass
class WrkResult:
    name: str
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    socket_errors: dict[str, int]
    non2xx: int
    server_errors: int
    wrapped: int
    rows_per_second: float | None = None

    @property
    def valid(self) -> bool:
        errors = sum(v for k, v in self.socket_errors.items() if k != "status")
        return self.requests > 0 and self.non2xx == 0 and errors == 0

    def problems(self, *, unique: bool) -> list[str]:
        found = []
        if self.non2xx:
            found.append(f"{self.non2xx} non-2xx ({self.server_errors} 5xx)")
        errors = {k: v for k, v in self.socket_errors.items() if v and k != "status"}
        if errors:
            found.append(f"socket errors {errors}")
        if unique and self.wrapped:
            found.append("pool exhausted: sessions were repeated")
        return found


def specs(
    pools: dict[str, Pool], *, body_sessions: int, warmup_share: float
) -> dict[str, tuple[LoadSpec, LoadSpec]]:
    """(warm-up, measurement) per run; the two walk disjoint slices of the pool."""

    def split(spec: LoadSpec, start_share: float = warmup_share) -> tuple[LoadSpec, LoadSpec]:
        warm = int(spec.count * start_share)
        return (
            LoadSpec(**{**spec.__dict__, "count": warm, "extra": {**spec.extra, "START": "0"}}),
            LoadSpec(
                **{
                    **spec.__dict__,
                    "count": spec.count - warm,
                    "extra": {**spec.extra, "START": str(warm)},
                }
            ),
        )

    body = {"prefix": BODY_PREFIX, "width": BODY_WIDTH, "count": body_sessions}
    invocations = pools["invocations"]
    return {
        "floor": split(LoadSpec("floor", "floor.lua", unique=False, **body), 0.5),
        "feedback_not_useful": split(
            LoadSpec(
                "feedback_not_useful",
                "feedback.lua",
                pools["not_useful"].prefix,
                POOL_WIDTH,
                pools["not_useful"].size,
                unique=True,
                extra={"FEEDBACK": "not_useful"},
            )
        ),
        # The same endpoint again, on its own sessions, beside the floor that does the
        # same write the plainest way.
        "feedback_not_useful_same_work": split(
            LoadSpec(
                "feedback_not_useful_same_work",
                "feedback.lua",
                pools["not_useful_again"].prefix,
                POOL_WIDTH,
                pools["not_useful_again"].size,
                unique=True,
                extra={"FEEDBACK": "not_useful"},
            )
        ),
        "not_useful_floor": split(
            LoadSpec(
                "not_useful_floor",
                "feedback.lua",
                pools["not_useful_floor"].prefix,
                POOL_WIDTH,
                pools["not_useful_floor"].size,
                unique=True,
                extra={"FEEDBACK": "not_useful", "PATH": "/bench/not-useful-floor"},
            )
        ),
        "feedback_first_useful": split(
            LoadSpec(
                "feedback_first_useful",
                "feedback.lua",
                pools["first_useful"].prefix,
                POOL_WIDTH,
                pools["first_useful"].size,
                unique=True,
                extra={"FEEDBACK": "useful"},
            )
        ),
        "useful_floor": split(
            LoadSpec(
                "useful_floor",
                "feedback.lua",
                pools["useful_floor"].prefix,
                POOL_WIDTH,
                pools["useful_floor"].size,
                unique=True,
                extra={"FEEDBACK": "useful", "PATH": "/bench/useful-floor"},
            )
        ),
        "feedback_repeat_useful": split(
            LoadSpec(
                "feedback_repeat_useful",
                "feedback.lua",
                pools["repeat_useful"].prefix,
                POOL_WIDTH,
                pools["repeat_useful"].size,
                unique=False,
                extra={"FEEDBACK": "useful"},
            ),
            0.5,
        ),
        "invocations_batch_1": split(
            LoadSpec(
                "invocations_batch_1",
                "invocations.lua",
                invocations.prefix,
                POOL_WIDTH,
                invocations.size,
                unique=False,
                extra={"BATCH": "1"},
            ),
            0.5,
        ),
        "invocations_batch_100": split(
            LoadSpec(
                "invocations_batch_100",
                "invocations.lua",
                invocations.prefix,
                POOL_WIDTH,
                invocations.size,
                unique=False,
                extra={"BATCH": "100"},
                rows_per_request=100,
            ),
            0.5,
        ),
        "bulk_create_floor_100": split(
            LoadSpec(
                "bulk_create_floor_100",
                "invocations.lua",
                invocations.prefix,
                POOL_WIDTH,
                invocations.size,
                unique=False,
                extra={"BATCH": "100", "PATH": "/bench/bulk/"},
                rows_per_request=100,
            ),
            0.5,
        ),
        "session_get": split(LoadSpec("session_get", "session_get.lua", unique=False, **body), 0.5),
    }


def run_wrk(
    spec: LoadSpec,
    *,
    url: str,
    key: str,
    seconds: float,
    threads: int,
    connections: int,
    nonce: str,
    log: Path,
) -> WrkResult:
    env = {
        **os.environ,
        "BENCH_LUA_DIR": str(LUA_DIR),
        "BENCH_PREFIX": spec.prefix,
        "BENCH_WIDTH": str(spec.width),
        "BENCH_COUNT": str(spec.count),
        "BENCH_THREADS": str(threads),
        "BENCH_KEY": key,
        "BENCH_NONCE": nonce,
        "BENCH_START": "0",
    }
    env.update({f"BENCH_{k}": v for k, v in spec.extra.items()})
    args = [
        WRK,
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        str(LUA_DIR / spec.script),
        url,
    ]
    completed = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=seconds + 60, check=False
    )
    with log.open("a") as out:
        out.write(f"$ {' '.join(args)}\n{completed.stdout}{completed.stderr}\n")
    line = next(
        (x for x in completed.stdout.splitlines() if x.startswith("BENCH_JSON ")),
        None,
    )
    if completed.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed for {spec.name}: {completed.stderr.strip()[-500:]}")
    data = json.loads(line.removeprefix("BENCH_JSON "))
    elapsed = data["duration_us"] / 1e6
    rps = data["requests"] / elapsed if elapsed else 0.0
    return WrkResult(
        name=spec.name,
        requests=data["requests"],
        seconds=round(elapsed, 3),
        rps=round(rps, 1),
        p50_ms=data["p50_us"] / 1000,
        p90_ms=data["p90_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        max_ms=data["max_us"] / 1000,
        socket_errors=data["errors"],
        non2xx=data["non2xx"],
        server_errors=data["server_errors"],
        wrapped=data["wrapped"],
        rows_per_second=round(rps * spec.rows_per_request, 1)
        if spec.rows_per_request > 1
        else None,
    )


def rounds_of(spec: LoadSpec, rounds: int) -> list[LoadSpec]:
    """`rounds` specs walking consecutive, disjoint parts of `spec`'s slice."""
    start = int(spec.extra.get("START", "0"))
    share = spec.count // rounds
    return [
        LoadSpec(
            **{
                **spec.__dict__,
                "count": share,
                "extra": {**spec.extra, "START": str(start + n * share)},
            }
        )
        for n in range(rounds)
    ]


def combine(endpoint: list[dict], floors: list[dict], *, seconds: float) -> dict:
    """One endpoint's rounds, each compared with the floor runs before and after it."""
    rps_ratios, p99_ratios = [], []
    for n, run in enumerate(endpoint):
        beside_rps = (floors[n]["rps"] + floors[n + 1]["rps"]) / 2
        beside_p99 = (floors[n]["p99_ms"] + floors[n + 1]["p99_ms"]) / 2
        rps_ratios.append(run["rps"] / beside_rps if beside_rps else 0.0)
        p99_ratios.append(run["p99_ms"] / beside_p99 if beside_p99 else 0.0)
    requests = sum(run["requests"] for run in endpoint)
    elapsed = sum(run["seconds"] for run in endpoint)
    rows = [run["rows_per_second"] for run in endpoint if run["rows_per_second"]]
    return {
        "requests": requests,
        "seconds": round(elapsed, 2),
        "rps": round(requests / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(statistics.median(run["p50_ms"] for run in endpoint), 2),
        "p99_ms": round(statistics.median(run["p99_ms"] for run in endpoint), 2),
        "rows_per_second": round(statistics.mean(rows), 1) if rows else None,
        "valid": all(run["valid"] for run in endpoint),
        "problems": sorted({p for run in endpoint for p in run["problems"]}),
        "ratio_rps": round(statistics.median(rps_ratios), 3),
        "ratio_p99": round(statistics.median(p99_ratios), 3),
        "round_ratios_rps": [round(r, 3) for r in rps_ratios],
        "floor": {
            "rps": round(statistics.mean(f["rps"] for f in floors), 1),
            "p99_ms": round(statistics.median(f["p99_ms"] for f in floors), 2),
            "rows_per_second": round(statistics.mean(f["rows_per_second"] or 0 for f in floors), 1),
        },
        "rounds": endpoint,
        "floor_runs": floors,
    }
