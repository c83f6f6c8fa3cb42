"""Search quality on the labelled query set holds its targets (README, "Case search")."""

import re

from caselibrary.error_codes import normalise_error_code
from caselibrary.models import GENERAL_CATEGORY
from config.env import env_float
from tests.processes import ROOT
from tests.search_quality.evaluate import DEFAULT_THRESHOLD, evaluate, load_cases, load_queries

SEEDED_CATEGORIES = {
    GENERAL_CATEGORY,
    "DATABASE",
    "NETWORK",
    "CAPACITY",
    "DEPLOYMENT_CONFIG",
    "DEPENDENCY",
    "APPLICATION_ERROR",
}


def test_the_case_library_and_the_queries_are_consistent() -> None:
    cases, queries = load_cases(), load_queries()
    keys = [case["key"] for case in cases]

    assert len(cases) >= 60 and len(set(keys)) == len(keys)
    assert {case["fault_category"] for case in cases} <= SEEDED_CATEGORIES
    assert all(len(case["title"]) <= 100 for case in cases)
    assert all(
        normalise_error_code(case["error_code"]) == case["error_code"]
        for case in cases
        if case["error_code"]
    )
    assert len(queries) >= 60
    assert sum(not q["expect"] for q in queries) * 3 >= len(queries)
    assert {q["lang"] for q in queries} == {"zh", "en"}
    assert all(key in keys for q in queries for key in q["expect"])


def test_the_labelled_queries_meet_the_quality_targets() -> None:
    quality = evaluate(load_cases(), load_queries())

    assert quality.hit_at_3 >= 0.9, quality.misses
    assert quality.no_answer_precision >= 0.9, quality.misses


def test_the_evaluation_uses_the_services_default_threshold(monkeypatch) -> None:
    monkeypatch.delenv("CASE_SEARCH_THRESHOLD", raising=False)
    settings_text = (ROOT / "config" / "settings.py").read_text()
    default = re.search(r'env_float\("CASE_SEARCH_THRESHOLD", ([0-9.]+)\)', settings_text)

    assert default and float(default.group(1)) == DEFAULT_THRESHOLD
    assert env_float("CASE_SEARCH_THRESHOLD", DEFAULT_THRESHOLD) == DEFAULT_THRESHOLD
