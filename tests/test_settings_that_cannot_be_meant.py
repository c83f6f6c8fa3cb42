"""Values no operator means are refused at start-up with one line, rather than taken: a
rate limit of zero (every request refused: `off` turns a limit off), a search threshold
outside the range of what it measures, a scrape token short enough to guess."""

import pytest

from tests.test_settings import refusal


@pytest.mark.parametrize(
    "name", ["FEEDBACK_RATE_LIMIT", "OTLP_RATE_LIMIT", "FEEDBACK_TOKEN_RATE_LIMIT"]
)
def test_a_rate_limit_of_zero_is_refused_and_off_is_named(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    assert refusal(monkeypatch, **{name: "0/min"}) == [
        f"{name} 0/min would refuse every request: say off to turn the limit off"
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CASE_SEARCH_MIN_COVERAGE", "1.5"),
        ("CASE_SEARCH_MIN_COVERAGE", "-0.5"),
        ("CASE_SEARCH_MIN_PEAK", "2"),
    ],
)
def test_a_search_threshold_outside_its_range_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    (line,) = refusal(monkeypatch, **{name: value})

    assert line.startswith(f"{name} must be ")


def test_a_scrape_token_short_enough_to_guess_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert refusal(monkeypatch, METRICS_BEARER_TOKEN="abc") == [
        "METRICS_BEARER_TOKEN must be at least 16 characters, got 3"
    ]
