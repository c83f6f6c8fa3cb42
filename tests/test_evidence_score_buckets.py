"""The evidence-score histogram and the dashboard's panel of scores by band put every score
(an integer, 0 to 100) in the band the admin shows it in: 0, 1–39, 40–64, ≥ 65."""

import json
import re

import pytest
import yaml
from prometheus_client import CollectorRegistry, Histogram

from config.metrics import EVIDENCE_SCORE_BUCKETS
from diagnosis.selectors import SCORE_BAND_BOUNDS, ScoreBand, score_band
from tests.processes import ROOT

DASHBOARD = ROOT / "config/grafana/diagnosis-dashboard.json"
ALERTS = ROOT / "config/grafana/alerts.yml"
SERIES = re.compile(
    r'sum\(rate\(diagnosis_evidence_score_(?:bucket\{le="(?P<le>[0-9.]+)"\}|count)\[1h\]\)\)'
)


def band_targets() -> list[dict]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    [panel] = [p for p in panels if "diagnosis_evidence_score" in json.dumps(p["targets"])]
    return panel["targets"]


def exported(score: int) -> dict[str, float]:
    """The histogram's series after one score, as Prometheus reads them (le -> count)."""
    registry = CollectorRegistry()
    histogram = Histogram(
        "diagnosis_evidence_score", "", buckets=EVIDENCE_SCORE_BUCKETS, registry=registry
    )
    histogram.observe(score)
    samples = {}
    for sample in next(iter(registry.collect())).samples:
        if sample.name.endswith("_bucket"):
            samples[sample.labels["le"]] = sample.value
        elif sample.name.endswith("_count"):
            samples["count"] = sample.value
    return samples


def evaluated(expr: str, samples: dict[str, float]) -> float:
    """`expr`, a difference of the histogram's series, on one scrape's samples."""
    terms = expr.split(" - ")
    values = []
    for term in terms:
        found = SERIES.fullmatch(term.strip())
        assert found, term
        values.append(samples[found["le"] or "count"])
    return values[0] - sum(values[1:])


@pytest.mark.parametrize("score", range(101))
def test_the_dashboard_counts_each_score_in_the_admins_band(score: int) -> None:
    samples = exported(score)

    counted = [t["legendFormat"] for t in band_targets() if evaluated(t["expr"], samples) == 1]

    assert counted == [str(ScoreBand(score_band(score)).label)]


def test_each_band_ends_at_a_bucket_edge() -> None:
    for low, high in SCORE_BAND_BOUNDS.values():
        assert low == 0 or low - 1 in EVIDENCE_SCORE_BUCKETS
        assert high is None or high in EVIDENCE_SCORE_BUCKETS


def test_every_evidence_score_edge_the_dashboard_and_alerts_name_is_a_bucket() -> None:
    text = DASHBOARD.read_text() + ALERTS.read_text()
    named = re.findall(r'diagnosis_evidence_score_bucket\{le=\\?"([0-9.]+)\\?"', text)

    assert named
    assert {float(le) for le in named} <= set(EVIDENCE_SCORE_BUCKETS)
    yaml.safe_load(ALERTS.read_text())  # still a rules file
