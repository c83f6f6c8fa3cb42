"""Exports at scale: `manage.py export` of every case and every bad case, its time and
peak RSS (held flat: rows are read in primary-key batches, never all at once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.bench import procs

RUNS = (("cases", "csv"), ("bad_cases", "jsonl"))


def run(*, env: dict[str, str], logs: Path) -> list[dict[str, Any]]:
    from caselibrary.models import CaseLibrary
    from feedback.models import BadCase

    counts = {"cases": CaseLibrary.objects.count(), "bad_cases": BadCase.objects.count()}
    results = []
    for name, fmt in RUNS:
        status, seconds, peak_kb = procs.run_measured(
            procs.python("manage.py", "export", name, "--format", fmt, "--output", "/dev/null"),
            env=env,
            log=logs / f"export-{name}.log",
        )
        if status != 0:
            raise RuntimeError(f"export {name} failed; see its log")
        results.append(
            {
                "name": name,
                "format": fmt,
                "rows": counts[name],
                "seconds": round(seconds, 1),
                "rows_per_second": round(counts[name] / seconds) if seconds else None,
                "peak_rss_mb": round(peak_kb / 1024, 1),
            }
        )
    return results


def rows(exports: list[dict[str, Any]] | None, check: Any) -> list[Any]:
    from tests.bench.report import Row

    out = []
    for e in exports or []:
        out.append(
            Row(
                f"export {e['name']} ({e['format']})",
                f"{e['rows']:,} rows in {e['seconds']} s, peak RSS {e['peak_rss_mb']} MB",
                "",
                "",
                "<= 150 MB",
                check(f"export_{e['name']}_rss", e["peak_rss_mb"], 150, at_most=True),
            )
        )
    return out
