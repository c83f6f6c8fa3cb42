"""The attribution page: the useful share with and without each factor, and calibration."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from feedback.selectors import Rate, feedback_attribution
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = reverse("admin-attribution")


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


def with_opinion(session, **values: bool):  # type: ignore[no-untyped-def]
    evaluation = dict(session.self_evaluation)
    evaluation["llm_opinion"] = {
        "source": "heuristic",
        "model": "rules",
        "version": "1",
        "factors": [{"name": n, "value": v, "rationale": ""} for n, v in values.items()],
        "created_at": "2026-12-03T00:00:00+00:00",
    }
    session.self_evaluation = evaluation
    session.save(update_fields=["self_evaluation"])
    return session


@pytest.fixture
def rated(db):  # type: ignore[no-untyped-def]
    # Scores of 65 carry an adjustment factor in the factories; 30 only the successful call.
    for _ in range(6):
        with_opinion(DiagnosisSessionFactory(useful=True, evidence_score=65), has_solution=True)
    for _ in range(2):
        with_opinion(
            DiagnosisSessionFactory(not_useful=True, evidence_score=65), has_solution=False
        )
    for _ in range(1):
        DiagnosisSessionFactory(useful=True, evidence_score=30)
    for _ in range(3):
        DiagnosisSessionFactory(not_useful=True, evidence_score=30)
    DiagnosisSessionFactory(succeeded=True, evidence_score=65)  # not rated: left out


def factor(attribution, kind: str, name: str):  # type: ignore[no-untyped-def]
    return next(f for f in attribution.factors if (f.kind, f.name) == (kind, name))


def test_the_sample_takes_the_newest_of_each_kind_up_to_the_setting(rated, settings) -> None:
    settings.ATTRIBUTION_SAMPLE = 2

    attribution = feedback_attribution(days=30)

    assert (attribution.sampled, attribution.sample_limit) == (4, 2)
    # The newest two of each kind: useful ones scored 30 and 65, not-useful ones both 30.
    rated_per_band = {band: rate.rated for band, rate in attribution.bands if rate.rated}
    assert rated_per_band == {"1-39": 3, "65+": 1}


def test_each_factor_is_compared_with_and_without_it(rated) -> None:
    attribution = feedback_attribution(days=30)

    assert attribution.sampled == 12
    successful = factor(attribution, "rule", "has_successful_tool_call")
    assert (successful.with_it.useful, successful.with_it.rated) == (7, 12)
    assert successful.without_it.rated == 0
    solution = factor(attribution, "opinion", "has_solution")
    # Among the eight sessions with an opinion: six with a solution, all useful.
    assert (solution.with_it.useful, solution.with_it.rated) == (6, 6)
    assert (solution.without_it.useful, solution.without_it.rated) == (0, 2)
    assert solution.lift == 1.0


def test_calibration_gives_the_useful_share_per_score_band(rated) -> None:
    bands = dict(feedback_attribution(days=30).bands)

    assert (bands["65+"].useful, bands["65+"].rated) == (6, 8)
    assert (bands["1-39"].useful, bands["1-39"].rated) == (1, 4)
    assert bands["0"].rated == 0


def test_the_wilson_interval_brackets_the_share_and_stays_in_bounds() -> None:
    low, high = Rate(useful=6, rated=8).interval
    assert low < 0.75 < high
    assert Rate(useful=0, rated=3).interval[0] == 0.0
    assert Rate(useful=5, rated=5).interval[1] == 1.0
    assert Rate(useful=0, rated=0).interval is None


def test_the_page_shows_the_table_and_the_chart(admin_client, rated) -> None:
    page = admin_client.get(URL).content.decode()

    assert 'id="attribution"' in page and 'id="calibration-chart"' in page
    assert '<span class="factor-name" title="has_solution">给出解决方案</span>' in page
    assert "100%" in page


def test_the_chart_s_bars_say_their_share_in_the_console_s_language(admin_client, rated) -> None:
    page = admin_client.get(URL).content.decode()

    assert "有用（6/8，95% 区间" in page
    assert " useful (" not in page


def test_the_overview_links_to_it(admin_client) -> None:
    assert URL in admin_client.get(reverse("admin-overview")).content.decode()


@pytest.mark.parametrize("more", [0, 30])
def test_the_page_takes_a_fixed_number_of_queries(
    admin_client, rated, django_assert_num_queries, more
) -> None:
    DiagnosisSessionFactory.create_batch(more, useful=True, evidence_score=50)

    # Django's session and user; the useful and the not-useful sample.
    with django_assert_num_queries(4):
        admin_client.get(URL, {"days": 90})


def test_anyone_not_logged_in_as_staff_is_sent_to_the_login(client, user_client) -> None:
    assert client.get(URL).status_code == 302  # to the login
    assert user_client.get(URL).status_code == 302
