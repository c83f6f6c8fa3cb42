"""The window in days the overview and attribution pages look back over: one rule for both
pages and both reads behind them. A page asked for a window it does not offer shows the
default one; a read asked for one refuses."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from feedback.selectors import (
    DEFAULT_OVERVIEW_WINDOW,
    OVERVIEW_WINDOWS,
    feedback_attribution,
    feedback_overview,
    overview_window,
)

pytestmark = pytest.mark.django_db

PAGES = [("admin-overview", "overview"), ("admin-attribution", "attribution")]
NOT_OFFERED = ["365", "0", "-7", "abc", "", "7.0", "30days"]


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize(("name", "key"), PAGES)
def test_each_page_shows_the_window_it_is_asked_for(admin_client, name, key) -> None:
    for days in OVERVIEW_WINDOWS:
        response = admin_client.get(reverse(name), {"days": str(days)})
        assert response.context[key].days == days


@pytest.mark.parametrize(("name", "key"), PAGES)
def test_each_page_shows_the_default_window_when_none_is_asked_for(admin_client, name, key) -> None:
    assert admin_client.get(reverse(name)).context[key].days == DEFAULT_OVERVIEW_WINDOW


@pytest.mark.parametrize(("name", "key"), PAGES)
@pytest.mark.parametrize("days", NOT_OFFERED)
def test_each_page_falls_back_to_the_default_window_for_one_it_does_not_offer(
    admin_client, name, key, days
) -> None:
    response = admin_client.get(reverse(name), {"days": days})

    assert response.status_code == 200
    assert response.context[key].days == DEFAULT_OVERVIEW_WINDOW


@pytest.mark.parametrize("read", [feedback_overview, feedback_attribution])
@pytest.mark.parametrize("days", [365, 0, None])
def test_both_reads_refuse_a_window_not_offered(read, days) -> None:
    with pytest.raises(ValueError, match="days must be one of"):
        read(days=days)


def test_the_window_rule_reads_a_query_value_as_a_whole_number() -> None:
    assert [overview_window(str(days)) for days in OVERVIEW_WINDOWS] == list(OVERVIEW_WINDOWS)
    assert overview_window(" 7 ") == 7
    assert overview_window(90) == 90


@pytest.mark.parametrize("days", [*NOT_OFFERED, 365, None])
def test_the_window_rule_refuses_anything_else(days) -> None:
    with pytest.raises(ValueError, match="days must be one of"):
        overview_window(days)


@pytest.mark.parametrize("days", [*NOT_OFFERED, 365, None])
def test_the_window_rule_gives_a_fallback_instead_when_one_is_given(days) -> None:
    assert overview_window(days, default=DEFAULT_OVERVIEW_WINDOW) == DEFAULT_OVERVIEW_WINDOW
