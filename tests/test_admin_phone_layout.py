"""The console on a phone held upright (390 pixels wide), in Chinese and in English: the
action bars' inputs wide enough to read and tap, and every column of what readers said
within reach on a bad case's page and on a session's page."""

from importlib import import_module

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.db.models import Q

from tests.admin_list_widths import admin_user  # noqa: F401
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FaultCategoryFactory,
    FeedbackEntryFactory,
)
from tests.test_admin_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401

pytestmark = pytest.mark.browser

PHONE = 390
# An input of the action bar no narrower than this: the action select read 12 px wide in
# Chinese (22 in English), "Assign to" 6 px, beside the other inputs on one line.
CONTROL_MIN_WIDTH = 120
# No taller than a line of them: the tag input, squeezed to a few pixels, grew to 46.
CONTROL_MAX_HEIGHT = 36
STAFF_GROUPS = import_module("feedback.migrations.0006_staff_groups").GROUPS

BAD_CASES = "/admin/feedback/badcase/"
CASES = "/admin/caselibrary/caselibrary/"
SESSIONS = "/admin/diagnosis/diagnosissession/"

# The action bar's controls, each with its box in the page.
ACTION_BAR = """() => [...document.querySelectorAll(
    '#changelist .actions :is(select, input:not([type=hidden]), button)')].map(el => {
  const box = el.getBoundingClientRect();
  return {name: el.name || el.className, left: box.left, right: box.right,
          width: box.width, height: box.height};
})"""

# Where an element ends up once scrolled into view as a reader can scroll: its box
# against the window's and against that of every ancestor that cuts what overflows it.
# A box whose overflow is hidden scrolls only for a script (scrollIntoView moves it too):
# it is put back where a reader, who cannot scroll it, sees it.
CLIPPED_BY = """el => {
  const ancestors = [];
  for (let up = el.parentElement; up; up = up.parentElement) ancestors.push(up);
  const cutting = ancestors.filter(up => getComputedStyle(up).overflowX !== 'visible');
  const unscrollable = cutting.filter(
    up => ['hidden', 'clip'].includes(getComputedStyle(up).overflowX));
  el.scrollIntoView({block: 'center', inline: 'end'});
  unscrollable.forEach(up => { up.scrollLeft = 0; });
  const box = el.getBoundingClientRect();
  const cuts = [];
  if (box.left < -1 || box.right > document.documentElement.clientWidth + 1) cuts.push('window');
  for (const up of cutting) {
    const room = up.getBoundingClientRect();
    if (box.left < room.left - 1 || box.right > room.right + 1)
      cuts.push(`${up.tagName}.${up.className}`);
  }
  return {cuts, left: box.left, right: box.right};
}"""


def staff_in_group(group: str, username: str) -> User:
    """A staff user of one of the staff groups (made again here: an earlier transactional
    test may have flushed the migration's groups)."""
    wanted = Q()
    for app, codename in STAFF_GROUPS[group]:
        wanted |= Q(content_type__app_label=app, codename=codename)
    made, _ = Group.objects.get_or_create(name=group)
    made.permissions.set(Permission.objects.filter(wanted))
    user = User.objects.create_user(username, password=PASSWORD, is_staff=True)
    user.groups.add(made)
    return user


def a_bad_case_with_what_readers_said() -> int:
    session = DiagnosisSessionFactory(
        session_id="0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c01",
        query="订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时",
        not_useful=True,
    )
    FeedbackEntryFactory(session=session)
    FeedbackEntryFactory(
        session=session,
        comment="The answer blamed the connection pool; the gateway's retries were the cause.",
        correction="Retries of payment-gateway doubled the load; cap them at one.",
    )
    return session.pk


def phone_page(browser, live_server, user, settings, english: bool):  # type: ignore[no-untyped-def]  # noqa: F811
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    return log_in(browser, live_server, user, width=PHONE, english=english)


def screenshot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    (SCREENSHOTS / "layout_390").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "layout_390" / f"{name}.png"), full_page=True)


def assert_the_action_bar_is_usable(page, url: str, names: set[str]) -> None:  # type: ignore[no-untyped-def]
    page.goto(f"{page.base_url}{url}")
    controls = page.evaluate(ACTION_BAR)
    assert names <= {control["name"] for control in controls}, controls
    window = page.evaluate("document.documentElement.clientWidth")
    too_small = [
        control
        for control in controls
        # The Go button is as wide as its word.
        if control["name"] != "index"
        and not (control["width"] >= CONTROL_MIN_WIDTH and control["height"] <= CONTROL_MAX_HEIGHT)
    ]
    out_of_reach = [c for c in controls if not (c["left"] >= 0 and c["right"] <= window)]
    assert (too_small, out_of_reach) == ([], []), controls


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_a_reviewer_reads_and_taps_every_input_of_the_bad_case_action_bar_on_a_phone(
    browser,  # noqa: F811
    live_server,
    settings,
    english: bool,
) -> None:
    reviewer = staff_in_group("reviewer", "ops.reviewer")
    staff_in_group("reviewer", "ops.colleague.with.a.rather.long.user.name")
    a_bad_case_with_what_readers_said()
    page = phone_page(browser, live_server, reviewer, settings, english)

    assert_the_action_bar_is_usable(page, BAD_CASES, {"action", "assignee", "tag", "index"})

    screenshot(page, f"bad_cases_{'en' if english else 'zh'}")
    page.context.close()


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_a_curator_reads_and_taps_the_category_input_of_the_case_action_bar_on_a_phone(
    browser,  # noqa: F811
    live_server,
    settings,
    english: bool,
) -> None:
    curator = staff_in_group("curator", "ops.curator")
    FaultCategoryFactory(code="DATABASE")
    CaseLibraryFactory(fault_category="DATABASE")
    page = phone_page(browser, live_server, curator, settings, english)

    assert_the_action_bar_is_usable(page, CASES, {"action", "fault_category", "index"})

    screenshot(page, f"cases_{'en' if english else 'zh'}")
    page.context.close()


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_session_list_action_bar_is_usable_on_a_phone(
    browser,  # noqa: F811
    live_server,
    settings,
    admin_user,  # noqa: F811
    english: bool,
) -> None:
    a_bad_case_with_what_readers_said()
    page = phone_page(browser, live_server, admin_user, settings, english)

    assert_the_action_bar_is_usable(page, SESSIONS, {"action", "index"})

    page.context.close()


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
@pytest.mark.parametrize("where", [BAD_CASES, SESSIONS], ids=["bad_case", "session"])
def test_every_column_of_what_readers_said_scrolls_into_view_on_a_phone(
    browser,  # noqa: F811
    live_server,
    settings,
    english: bool,
    where: str,
) -> None:
    reviewer = staff_in_group("reviewer", "ops.reviewer")
    pk = a_bad_case_with_what_readers_said()
    page = phone_page(browser, live_server, reviewer, settings, english)
    page.goto(f"{page.base_url}{where}{pk}/change/")

    for cell in ("th.feedback-channel", "td.feedback-channel", "td.feedback-correction"):
        found = page.locator(f"table.feedback-history {cell}").first.evaluate(CLIPPED_BY)
        assert found["cuts"] == [], (cell, found)

    kind = "bad_case" if where == BAD_CASES else "session"
    screenshot(page, f"{kind}_readers_{'en' if english else 'zh'}")
    page.context.close()


@pytest.mark.parametrize("width", [1024, 1366, 1920])
def test_on_a_wider_screen_the_bad_case_action_bar_keeps_one_line_and_readers_table_its_width(
    browser,  # noqa: F811
    live_server,
    settings,
    width: int,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    reviewer = staff_in_group("reviewer", "ops.reviewer")
    pk = a_bad_case_with_what_readers_said()
    page = log_in(browser, live_server, reviewer, width=width, english=False)

    page.goto(f"{page.base_url}{BAD_CASES}")
    controls = page.evaluate("""() => [...document.querySelectorAll(
        '#changelist .actions :is(select, input:not([type=hidden]), button)')]
        .map(el => Math.round(el.getBoundingClientRect().top))""")
    # Side by side: their tops differ by the few pixels the text input is taller.
    assert max(controls) - min(controls) <= 4, controls

    page.goto(f"{page.base_url}{BAD_CASES}{pk}/change/")
    table = page.locator("table.feedback-history").evaluate(
        """table => ({table: table.getBoundingClientRect().width,
          box: table.parentElement.clientWidth,
          scrolls: table.parentElement.scrollWidth > table.parentElement.clientWidth})"""
    )
    assert not table["scrolls"], table
    page.context.close()
