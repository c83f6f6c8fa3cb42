"""The session timeline on a 1024-pixel screen, in Chinese and in English: each row within
the timeline's field (which cuts what sticks out), its bar and its duration in view; at
1366 pixels beside its label, as before, and within its field too."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from diagnosis.models import DiagnosisSession
from tests.test_admin_browser import (  # noqa: F401
    PASSWORD,
    browser,
    finish,
    log_in,
)
from tests.test_admin_timeline_browser import an_agent_run

pytestmark = pytest.mark.browser

LIST = "/admin/diagnosis/diagnosissession/"
# Where the timeline, its rows' bars and durations end against the right edge of the
# field's row, how far the row's content reaches past that edge, where the timeline starts
# against its label's right edge, and what each duration reads.
PLACES = """() => {
  const field = document.querySelector('.form-row.field-timeline');
  const row = field.getBoundingClientRect();
  const timeline = document.querySelector('#session-timeline').getBoundingClientRect();
  const rights = selector => [...document.querySelectorAll(`#session-timeline ${selector}`)]
    .map(element => element.getBoundingClientRect().right);
  return {
    window: window.innerWidth,
    page: document.documentElement.scrollWidth,
    row: row.right,
    overflow: field.scrollWidth - field.clientWidth,
    label: field.querySelector('label').getBoundingClientRect().right,
    start: timeline.left,
    timeline: timeline.right,
    width: timeline.width,
    tracks: rights('summary .track'),
    durations: rights('summary .ms'),
    texts: [...document.querySelectorAll('#session-timeline summary .ms')].map(
      ms => ms.textContent),
  };
}"""


@pytest.fixture
def admin_user(transactional_db) -> User:  # type: ignore[no-untyped-def]
    return User.objects.create_superuser("ops.admin", password=PASSWORD)


def places_on_the_session_page(  # type: ignore[no-untyped-def]
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
    settings,
    *,
    width: int,
    english: bool,
) -> dict:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    an_agent_run(make_client("agent").raw_key, settings)
    session = DiagnosisSession.objects.get(session_id="browser-attributes")
    page = log_in(browser, live_server, admin_user, width=width, english=english)
    page.goto(f"{page.base_url}{LIST}{session.pk}/change/")
    timeline = page.locator("#session-timeline")
    expect(timeline.locator("details")).to_have_count(3)
    places = page.evaluate(PLACES)
    finish(page, f"timeline_at_{width}_{'english' if english else 'chinese'}")
    return places


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_every_timeline_row_keeps_its_bar_and_duration_in_view_at_1024_pixels(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
    settings,
    english,
) -> None:
    places = places_on_the_session_page(
        browser, live_server, admin_user, make_client, settings, width=1024, english=english
    )

    assert places["page"] <= places["window"] == 1024, places
    assert places["overflow"] == 0, places
    assert places["timeline"] <= places["row"], places
    assert all(right <= places["row"] for right in places["tracks"]), places
    assert all(right <= places["row"] for right in places["durations"]), places
    assert places["texts"] == ["900 ms", "400 ms", "200 ms"], places


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_timeline_stays_beside_its_label_and_within_its_field_at_1366_pixels(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
    settings,
    english,
) -> None:
    places = places_on_the_session_page(
        browser, live_server, admin_user, make_client, settings, width=1366, english=english
    )

    assert places["page"] <= places["window"] == 1366, places
    assert places["start"] >= places["label"], places
    assert places["overflow"] == 0, places
    assert places["timeline"] <= places["row"], places
    assert all(right <= places["row"] for right in places["tracks"]), places
    assert all(right <= places["row"] for right in places["durations"]), places
