"""Opinions of the heuristic provider: through a real `qcluster`, and set-based.

drain: completions enqueued with no worker running, then a 2-worker cluster started with
OPINION_PROVIDER=heuristic; each scoring task enqueues its opinion task, so the cluster
drains both. Read from the rows: `llm_opinion.created_at` (the provider's clock when it
formed the opinion) and the scores' `updated_at`. The headline is end to end, first
score written to last opinion written: sessions scored and judged per second, against
the rule-only drain (opinions off) that the scoring step measures in the same run.
Opinion tasks queue behind the scoring tasks still waiting, so the opinions' own span
(first to last opinion) is shorter and is reported beside it.

set-based: `manage.py rescore --opinion --all` (two reads and one UPDATE per batch of
1,000), its own clock.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.bench import procs
from tests.bench.dataset import Pool
from tests.bench.scoring import Scoring

HEURISTIC = {"OPINION_PROVIDER": "heuristic"}


@dataclass
class OpinionDrain:
    count: int
    opinions: int
    wall_seconds: float
    opinion_span_seconds: float
    opinions_per_second: float
    rule_span_seconds: float
    rules_per_second: float
    # First rule write to last opinion: sessions both scored and judged, per second.
    end_to_end_seconds: float
    end_to_end_per_second: float
    complete: bool


def _opinion_times(pool: Pool, start: int, count: int) -> list[datetime]:
    from django.db import connection

    low, high = pool.session_id(start), pool.session_id(start + count - 1)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT JSON_VALUE(self_evaluation, '$.llm_opinion.created_at') "
            "FROM diagnosis_session WHERE session_id BETWEEN %s AND %s "
            "AND JSON_EXTRACT(self_evaluation, '$.llm_opinion') IS NOT NULL",
            [low, high],
        )
        return sorted(datetime.fromisoformat(row[0]) for row in cursor.fetchall())


def _first_rule_write(pool: Pool, start: int, count: int) -> datetime:
    from django.db.models import Min

    from diagnosis.models import DiagnosisSession

    low, high = pool.session_id(start), pool.session_id(start + count - 1)
    return DiagnosisSession.objects.filter(
        session_id__range=(low, high), self_evaluation__isnull=False
    ).aggregate(first=Min("updated_at"))["first"]


def drain(
    *, pool: Pool, env: dict[str, str], logs: Path, start: int, count: int, timeout: float
) -> OpinionDrain:
    runner = Scoring(pool=pool, env=env, logs=logs)
    cluster_env = {**runner.env, "Q_WORKERS": "2", **HEURISTIC}
    runner._enqueue(start, count, env=cluster_env, processes=2)
    began = time.monotonic()
    cluster = runner._cluster(cluster_env, "opinion")
    complete = False
    try:
        deadline = began + timeout
        while time.monotonic() < deadline:
            if len(_opinion_times(pool, start, count)) >= count:
                complete = True
                break
            time.sleep(0.5)
        wall = time.monotonic() - began
    finally:
        procs.stop(cluster)
    times = _opinion_times(pool, start, count)
    span = (times[-1] - times[0]).total_seconds() if len(times) > 1 else 0.0
    scored = runner._scored(start, count)
    rule_span = runner._write_span(start, count) if scored else 0.0
    end_to_end = (
        (times[-1] - _first_rule_write(pool, start, count)).total_seconds() if times else 0.0
    )
    return OpinionDrain(
        count=count,
        opinions=len(times),
        wall_seconds=round(wall, 2),
        opinion_span_seconds=round(span, 2),
        opinions_per_second=round(len(times) / span, 1) if span else 0.0,
        rule_span_seconds=round(rule_span, 2),
        rules_per_second=round(scored / rule_span, 1) if rule_span else 0.0,
        end_to_end_seconds=round(end_to_end, 2),
        end_to_end_per_second=round(len(times) / end_to_end, 1) if end_to_end else 0.0,
        complete=complete,
    )


def set_based(*, env: dict[str, str], log: Path) -> dict[str, Any]:
    """`manage.py rescore --opinion --all` as its own process."""
    status, seconds, rss_kb = procs.run_measured(
        procs.python("manage.py", "rescore", "--opinion", "--all", "--no-progress"),
        env={**env, **HEURISTIC},
        log=log,
    )
    if status != 0:
        raise RuntimeError(f"rescore --opinion failed with {status}; see {log}")
    found = re.findall(r"Formed (\d+) opinion\(s\) in ([\d.]+)s", log.read_text())
    if not found:  # its summary reworded: a figure of 0 would read as a measurement
        raise RuntimeError(f"rescore --opinion printed no summary line; see {log}")
    opinions, own = int(found[-1][0]), float(found[-1][1])
    return {
        "opinions": opinions,
        "seconds": round(own, 2),
        "wall_seconds": round(seconds, 2),
        "per_second": round(opinions / own, 1) if own else 0.0,
        "peak_rss_mb": round(rss_kb / 1024, 1),
    }


def as_dict(result: object) -> dict:
    return asdict(result)  # type: ignore[call-overload]
