"""Calibrate the answer-or-NONE decision: `python -m tests.search_quality.calibrate`.

Asks every labelled question (tests/search_quality/evaluate.py) and keeps, for each, its
best similar candidate's features: the peak (cosine above the question's mean cosine to
unrelated text) and the share of the question's terms it holds. For each peak threshold
(at the chosen term-coverage threshold) it counts, over the questions without an exact
hit: recall (answerable questions answered) and precision (answers offered that were
right: a right case first, or any case offered to a question with no answer counts as
wrong). Writes the curve as an SVG (no plotting library) and prints the thresholds that
maximise the smaller of "answered when answerable" and "NONE when unanswerable".
A question naming something no case mentions is never answered at L1, at any threshold.
`--split` also chooses them on the even-numbered questions alone and prints what they
give on the odd-numbered ones, a check that they are not fitted to the questions.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path

from tests.search_quality.evaluate import Asked

ROOT = Path(__file__).resolve().parent.parent.parent
SVG = ROOT / "docs" / "search-quality-curve.svg"
COVERAGES = (0.4, 0.5, 0.6, 0.7, 0.8, 1.01)


@dataclass(frozen=True)
class Point:
    peak: float
    coverage: float
    precision: float
    recall: float
    answered: float
    none_right: float


def points(asked: list[Asked], coverage: float) -> list[Point]:
    items = [a for a in asked if not a.top_exact]
    peaks = sorted({round(a.top_peak, 3) for a in items if a.top_peak is not None})
    out = []
    for peak in [min(peaks, default=0) - 0.001, *peaks, max(peaks, default=0) + 0.001]:
        offered = right = answerable = answered = unanswerable = refused = 0
        for a in items:
            take = not a.unknown_name and (
                (a.top_coverage or 0) >= coverage or (a.top_peak or -1) >= peak
            )
            if a.query["expect"]:
                answerable += 1
                answered += take
                right += take and a.top_right
            else:
                unanswerable += 1
                refused += not take
            offered += take
        out.append(
            Point(
                peak,
                coverage,
                right / offered if offered else 1.0,
                right / answerable if answerable else 0.0,
                answered / answerable if answerable else 0.0,
                refused / unanswerable if unanswerable else 0.0,
            )
        )
    return out


def at(asked: list[Asked], peak: float, coverage: float) -> Point:
    """The point of one pair of thresholds."""
    return next(p for p in points(asked, coverage) if p.peak >= peak - 1e-9)


def best(asked: list[Asked]) -> Point:
    candidates = [p for c in COVERAGES for p in points(asked, c)]
    return max(candidates, key=lambda p: (min(p.answered, p.none_right), p.precision))


def svg(curves: dict[float, list[Point]], chosen: Point, title: str) -> str:
    width, height, margin = 560, 420, 56
    inner_w, inner_h = width - 2 * margin, height - 2 * margin

    def x(recall: float) -> float:
        return margin + recall * inner_w

    def y(precision: float) -> float:
        return height - margin - precision * inner_h

    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
        f'<line x1="{margin}" y1="{height - margin}" x2="{width - margin}" '
        f'y2="{height - margin}" stroke="black"/>',
        f'<line x1="{margin}" y1="{margin}" x2="{margin}" y2="{height - margin}" stroke="black"/>',
        f'<text x="{width / 2}" y="{height - 16}" text-anchor="middle">recall (answerable '
        "questions answered with the right case first)</text>",
        f'<text x="16" y="{height / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {height / 2})">precision (answers offered that were right)'
        "</text>",
    ]
    for tick in range(0, 11, 2):
        value = tick / 10
        parts.append(
            f'<text x="{x(value)}" y="{height - margin + 16}" text-anchor="middle">{value:.1f}'
            f'</text><text x="{margin - 8}" y="{y(value) + 4}" text-anchor="end">{value:.1f}</text>'
            f'<line x1="{margin}" y1="{y(value)}" x2="{width - margin}" y2="{y(value)}" '
            'stroke="#ddd"/>'
        )
    for n, (coverage, curve) in enumerate(sorted(curves.items())):
        colour = colours[n % len(colours)]
        path = " ".join(f"{x(p.recall):.1f},{y(p.precision):.1f}" for p in curve)
        label = "peak only" if coverage > 1 else f"or terms >= {coverage:.1f}"
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}"/>'
        )
        parts.append(
            f'<text x="{margin + 12}" y="{height - margin - 100 + 16 * n}" fill="{colour}">'
            f"{label}</text>"
        )
    parts.append(
        f'<circle cx="{x(chosen.recall):.1f}" cy="{y(chosen.precision):.1f}" r="5" fill="none" '
        f'stroke="black" stroke-width="2"/><text x="{x(chosen.recall) - 8:.1f}" '
        f'y="{y(chosen.precision) + 20:.1f}" text-anchor="end">chosen: peak {chosen.peak:.3f}, '
        f"terms {chosen.coverage:.1f}</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--svg", type=Path, default=SVG)
    parser.add_argument(
        "--features",
        type=Path,
        help="read the features `evaluate --dump` wrote instead of asking again",
    )
    parser.add_argument(
        "--split", action="store_true", help="choose on even questions, check on odd ones"
    )
    options = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings

    from tests.search_quality.evaluate import evaluate_in_test_database, load_library, load_queries

    if options.features:
        asked = [
            Asked(
                query={"expect": ["?"] if f["answerable"] else [], "kind": f["kind"]},
                hits=[],
                top_cosine=f["cosine"],
                top_coverage=f["coverage"],
                top_peak=f["peak"],
                top_right=f["right"],
                top_exact=f["exact"],
                unknown_name=f.get("unknown_name", False),
            )
            for f in json.loads(options.features.read_text())
        ]
    else:
        asked = evaluate_in_test_database(load_queries(), load_library())
    chosen = best(asked)
    curves = {c: points(asked, c) for c in COVERAGES}
    model = settings.CASE_EMBEDDING_MODEL
    options.svg.write_text(svg(curves, chosen, f"Answer or NONE ({model}, {len(asked)} questions)"))
    print(
        f"{model}: peak >= {chosen.peak:.3f} or terms >= {chosen.coverage:.2f}: answered "
        f"{chosen.answered:.3f}, NONE when unanswerable {chosen.none_right:.3f}, precision "
        f"{chosen.precision:.3f}, recall {chosen.recall:.3f}. Curve: {options.svg}"
    )
    if options.split:
        even, odd = asked[::2], asked[1::2]
        half = best(even)
        check = at(odd, half.peak, half.coverage)
        print(
            f"chosen on the even questions: peak >= {half.peak:.3f} or terms >= "
            f"{half.coverage:.2f}: even answered {half.answered:.3f}, NONE "
            f"{half.none_right:.3f}; odd answered {check.answered:.3f}, NONE "
            f"{check.none_right:.3f}"
        )


if __name__ == "__main__":
    main()
