"""The bad-case, session and case lists on a 1024-pixel screen (a small laptop, a tablet
held sideways, a window beside another), in Chinese and in English: the page does not
scroll sideways, the question or the title keeps a readable column, and the short
values are not cut in two mid-word."""

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import expect

from caselibrary.models import CaseLibrary
from feedback.models import BadCaseReview, ReviewTag
from tests.admin_list_widths import SEEDED_CATEGORIES, admin_user  # noqa: F401
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory
from tests.test_admin_browser import PASSWORD, SCREENSHOTS, browser, log_in  # noqa: F401
from tests.test_admin_browser_widths import (
    BROKEN_WORDS,
    COLUMN_WIDTH,
    REAL_QUESTIONS,
    at_the_longest_times,
    real_bad_cases,
)

pytestmark = pytest.mark.browser

WIDTH = 1024
# A case's title read a few words a line: at 1024 px its column had 40 px, a character
# or two a line.
TITLE_MIN_WIDTH = 250
# The question's text beside the other columns of the bad-case list, about as wide as at
# 1366 px (a column of 130 px or so, its padding included).
QUESTION_MIN_WIDTH = 125
# The page's width against the window's, and the list's against its box.
WIDTHS = """() => ({page: document.documentElement.scrollWidth,
  window: document.documentElement.clientWidth,
  list: document.querySelector('#changelist .results').scrollWidth,
  box: document.querySelector('#changelist .results').clientWidth})"""


def layout_screenshot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    """The whole page, in artifacts/screenshots/layout_1024/."""
    (SCREENSHOTS / "layout_1024").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "layout_1024" / f"{name}.png"), full_page=True)


def real_sessions() -> None:
    """The session list as it fills in a day: finished, rated or not, a few failed."""
    for n, query in enumerate(REAL_QUESTIONS):
        session_id = f"0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c{n:02d}"
        kind = ("useful", "not_useful", "succeeded", "failed")[n % 4]
        extra = {} if kind == "failed" else {"evidence_score": (0, 20, 45, 65, 80)[n % 5]}
        DiagnosisSessionFactory(session_id=session_id, query=query, **{kind: True}, **extra)


def real_cases() -> None:
    """The case library as curation leaves it: titles from the questions, the seeded
    categories, error codes as the logs spell them, a few cases made from sessions."""
    for code, name, description in SEEDED_CATEGORIES:
        FaultCategoryFactory(code=code, name=name, description=description)
    codes = [code for code, _name, _description in SEEDED_CATEGORIES]
    error_codes = (
        "java.util.concurrent.RejectedExecutionException",
        "ERR_RATE_LIMITED",
        "OOMKilled",
        "",
        "ENOSPC",
        "HTTP_504",
    )
    for n, title in enumerate(REAL_QUESTIONS):
        fields = {
            "title": title,
            "fault_category": codes[n % len(codes)],
            "error_code": error_codes[n % len(error_codes)],
            "updated_by": "ops.curator.with.a.long.name",
        }
        if n % 3 == 0:
            session = DiagnosisSessionFactory(
                session_id=f"0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c{n:02d}", query=title, useful=True
            )
            fields.update(diagnosis=session, source_type="AUTO", created_by="system")
        CaseLibraryFactory(**fields)


# Each list: its address, its rows, its wide column, and the cells that stay short and
# must not be cut mid-word.
LISTS: dict[str, tuple[str, Callable[[], None], str, str]] = {
    "bad_cases": (
        "/admin/feedback/badcase/",
        real_bad_cases,
        "query_excerpt",
        ".field-review_state_column, .field-reviewed, .field-assignee_column",
    ),
    "sessions": (
        "/admin/diagnosis/diagnosissession/",
        real_sessions,
        "query_excerpt",
        ".field-status, .field-feedback, .field-score_column",
    ),
    "cases": (
        "/admin/caselibrary/caselibrary/",
        real_cases,
        "title",
        ".field-source_column, .field-reuse_column",
    ),
}
MIN_WIDTHS = {"bad_cases": QUESTION_MIN_WIDTH, "sessions": QUESTION_MIN_WIDTH}
# The words of a title or question cut in two though the column has room for them on a
# line: a word is what lies between spaces, hyphens, slashes and the punctuation a line
# may break after. Those with Chinese in them are left out (a run of Chinese breaks
# between any two characters), and a dotted name longer than the column may break
# anywhere.
NEEDLESS_BREAKS = """cells => cells.flatMap(cell => {
  const broken = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const style = getComputedStyle(node.parentElement);
    const room = node.parentElement.clientWidth - parseFloat(style.paddingLeft)
      - parseFloat(style.paddingRight);
    for (const word of node.data.matchAll(/[^\\s，、；：。/-]+/gu)) {
      if (/\\p{Script=Han}/u.test(word[0])) continue;
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const rects = [...range.getClientRects()];
      const width = rects.reduce((sum, rect) => sum + rect.width, 0);
      const lines = new Set(rects.map(rect => Math.round(rect.top))).size;
      if (lines > 1 && width <= room) broken.push(word[0]);
    }
  }
  return broken;
})"""

# The width a column's text may take in its narrowest row: that of the cell, or of the
# one element the cell holds (a title's link, a question's excerpt).
TEXT_ROOM = """cells => Math.min(...cells.map(cell => {
  const box = cell.children.length === 1 ? cell.children[0] : cell;
  const style = getComputedStyle(box);
  return box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}))"""


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
@pytest.mark.parametrize("name", list(LISTS))
def test_the_list_fits_a_1024_pixel_screen_with_its_wide_column_readable_and_words_whole(
    browser,  # noqa: F811
    live_server,
    admin_user,  # noqa: F811
    settings,
    name,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    url, fill, wide_column, short_cells = LISTS[name]
    fill()
    at_the_longest_times(english)
    page = log_in(browser, live_server, admin_user, width=WIDTH, english=english)
    page.set_viewport_size({"width": WIDTH, "height": 768})

    page.goto(page.base_url + url)
    expect(page.locator("#result_list tbody tr")).to_have_count(len(REAL_QUESTIONS))
    widths = page.evaluate(WIDTHS)
    column = page.evaluate(COLUMN_WIDTH, wide_column)
    wide_cells = page.locator(f"#result_list tbody .field-{wide_column}")
    room = wide_cells.evaluate_all(TEXT_ROOM)
    broken = page.locator(f"#result_list tbody :is({short_cells})").evaluate_all(BROKEN_WORDS)
    broken_in_wide = wide_cells.evaluate_all(NEEDLESS_BREAKS)
    language = "english" if english else "chinese"
    layout_screenshot(page, f"{name}_{language}")
    page.context.close()

    assert widths["page"] <= widths["window"] == WIDTH, widths
    assert widths["list"] <= widths["box"], widths
    assert room >= MIN_WIDTHS.get(name, TITLE_MIN_WIDTH), (column, room)
    assert broken == [], broken
    assert broken_in_wide == [], broken_in_wide


def test_the_navigation_is_as_narrow_on_every_page_of_a_1024_pixel_screen(
    browser,  # noqa: F811
    live_server,
    admin_user,  # noqa: F811
    settings,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    page = log_in(browser, live_server, admin_user, width=WIDTH)
    page.set_viewport_size({"width": WIDTH, "height": 768})

    widths = {}
    for url in ("/admin/auth/user/", "/admin/feedback/badcase/", "/admin/password_change/"):
        page.goto(page.base_url + url)
        widths[url] = page.locator("#nav-sidebar").evaluate("nav => nav.offsetWidth")
    page.context.close()

    assert set(widths.values()) == {181}, widths


# The links above the list and in its filters, each at its centre: those in view whose
# centre is covered by another element (the export buttons over the header's links). The
# sorting links of the list's headers, Django's own, are left out.
COVERED_LINKS = """() => [...document.querySelectorAll('#content a:not(#result_list a)')]
.flatMap(link => {
  const rect = link.getBoundingClientRect();
  if (!rect.width || !rect.height || rect.bottom > innerHeight) return [];
  const top = document.elementFromPoint(rect.left + rect.width / 2, rect.top + rect.height / 2);
  return top && !link.contains(top) ? [`${link.textContent.trim()} under ${top.outerHTML}`] : [];
})"""


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
@pytest.mark.parametrize("width", [WIDTH, 1366])
def test_no_button_of_the_bad_case_list_covers_a_link_of_its_header(
    browser,  # noqa: F811
    live_server,
    admin_user,  # noqa: F811
    settings,
    width,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    real_bad_cases()
    page = log_in(browser, live_server, admin_user, width=width, english=english)
    page.set_viewport_size({"width": width, "height": 768})

    page.goto(page.base_url + "/admin/feedback/badcase/")
    expect(page.locator("#result_list tbody tr")).to_have_count(len(REAL_QUESTIONS))
    covered = page.evaluate(COVERED_LINKS)
    language = "english" if english else "chinese"
    layout_screenshot(page, f"header_{width}_{language}")
    page.context.close()

    assert covered == [], covered


# The first row's top against the page's, 768 px high: a hundred tags above the list
# took 1342 px, the first case at 1790 px rather than on the first screen.
FIRST_ROW_TOP = """() => document.querySelector('#result_list tbody tr')
  .getBoundingClientRect().top + scrollY"""
SCREEN_HEIGHT = 768
# A hundred tags lower the list by no more than the few lines a filter shows before its
# own scroll.
TAGS_MAX_DROP = 60


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_a_hundred_tags_leave_the_first_bad_cases_on_the_first_screen_at_1024_pixels(
    browser,  # noqa: F811
    live_server,
    admin_user,  # noqa: F811
    settings,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    real_bad_cases()
    page = log_in(browser, live_server, admin_user, width=WIDTH, english=english)
    page.set_viewport_size({"width": WIDTH, "height": SCREEN_HEIGHT})
    page.goto(page.base_url + "/admin/feedback/badcase/")
    expect(page.locator("#result_list tbody tr")).to_have_count(len(REAL_QUESTIONS))
    top_with_one_tag = page.evaluate(FIRST_ROW_TOP)

    areas = ("payment", "order", "redis", "kafka", "dns", "k8s-node", "gateway")
    for n in range(104):
        ReviewTag.objects.create(name=f"{areas[n % len(areas)]}-{n:03d}-followup")
    page.reload()
    expect(page.locator("#result_list tbody tr")).to_have_count(len(REAL_QUESTIONS))
    top = page.evaluate(FIRST_ROW_TOP)
    tags_listed = page.locator("#changelist-filter details:has(a[href*='tag=']) li").count()
    language = "english" if english else "chinese"
    layout_screenshot(page, f"tags_{language}")
    page.context.close()

    assert ReviewTag.objects.count() == 105
    assert tags_listed == 101, tags_listed  # "All" and the hundred the filter lists
    assert top - top_with_one_tag <= TAGS_MAX_DROP, (top_with_one_tag, top)
    assert top < SCREEN_HEIGHT, top


# Error codes as the logs spell them, some longer than a column can show on a line.
LONG_ERROR_CODES = (
    "RedisCommandTimeoutException",
    "java.util.concurrent.RejectedExecutionException",
    "KafkaConsumerRebalanceInProgressException",
    "CrashLoopBackOff",
    "",
    "ERR_RATE_LIMITED",
)


@pytest.fixture
def case_reader(transactional_db) -> User:  # type: ignore[no-untyped-def]
    """A reviewer: reads the case library, changes none of it (its codes shown as text)."""
    user = User.objects.create_user("qa_reviewer", password=PASSWORD, is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            codename__in=["view_caselibrary", "view_faultcategory", "view_badcase"]
        )
    )
    return user


# The room a case's title has beside the other columns, by window width: at 1366 px, beside
# the filters, a title had 88 to 136 px, three words a line, and 42 beside a long code.
TITLE_ROOM = {WIDTH: TITLE_MIN_WIDTH, 1366: 160}


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
@pytest.mark.parametrize("who", ["reviewer", "superuser"])
@pytest.mark.parametrize("width", list(TITLE_ROOM))
def test_the_case_list_with_long_error_codes_fits_its_box_with_room_for_the_title(
    browser,  # noqa: F811
    live_server,
    admin_user,  # noqa: F811
    case_reader,
    settings,
    width,
    who,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    real_cases()
    for n, case in enumerate(CaseLibrary.objects.order_by("pk")):
        case.error_code = LONG_ERROR_CODES[n % len(LONG_ERROR_CODES)]
        case.save(update_fields=["error_code"])
    user = case_reader if who == "reviewer" else admin_user
    page = log_in(browser, live_server, user, width=width, english=english)
    page.set_viewport_size({"width": width, "height": 768})

    page.goto(page.base_url + "/admin/caselibrary/caselibrary/")
    expect(page.locator("#result_list tbody tr")).to_have_count(len(REAL_QUESTIONS))
    widths = page.evaluate(WIDTHS)
    room = page.locator("#result_list tbody .field-title").evaluate_all(TEXT_ROOM)
    codes = page.locator("#result_list tbody td.field-error_code")
    cut_codes = codes.evaluate_all(NEEDLESS_BREAKS)
    language = "english" if english else "chinese"
    layout_screenshot(page, f"long_codes_{width}_{who}_{language}")
    page.context.close()

    assert widths["page"] <= widths["window"] == width, widths
    assert widths["list"] <= widths["box"], widths
    assert room >= TITLE_ROOM[width], room
    assert cut_codes == [], cut_codes


# User names as a platform team's directory writes them, longer than any column (Django
# takes 150 characters): each is a choice of the action bar's "Assign to", whose select
# grew to the longest (the page 1085 px wide), and one wrote the last review of a case.
LONG_NAMES = (
    "zhangsan.very-long-reviewer-name-from-the-sre-platform-team-xxxx",
    "lisi.another-very-long-reviewer-name-from-the-database-team@corp-directory.example.com",
    "wangwu.on-call-reviewer-of-the-payments-and-checkout-services@sre-platform.corp-directory"
    ".example.com",
)
# How many lines the tallest "last review" cell takes (name, day, time: three at most;
# a long hyphenated name took six).
LAST_REVIEW_LINES = """cells => Math.max(...cells.map(cell => {
  const box = cell.querySelector('.last-review') || cell;
  return box.getBoundingClientRect().height / parseFloat(getComputedStyle(box).lineHeight);
}))"""


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
@pytest.mark.parametrize("width", [WIDTH, 1366])
def test_the_bad_case_list_with_long_user_names_fits_the_screen_on_short_rows(
    browser,  # noqa: F811
    live_server,
    admin_user,  # noqa: F811
    settings,
    width,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    real_bad_cases()
    for name in LONG_NAMES:
        User.objects.create_user(name, password=PASSWORD, is_staff=True, is_superuser=True)
    BadCaseReview.objects.exclude(reviewed_at=None).update(reviewed_by=LONG_NAMES[0])
    at_the_longest_times(english)
    page = log_in(browser, live_server, admin_user, width=width, english=english)
    page.set_viewport_size({"width": width, "height": 768})

    page.goto(page.base_url + "/admin/feedback/badcase/")
    expect(page.locator("#result_list tbody tr")).to_have_count(len(REAL_QUESTIONS))
    choices = page.locator(".actions select[name=assignee] option").all_text_contents()
    widths = page.evaluate(WIDTHS)
    lines = page.locator("#result_list tbody td.field-reviewed").evaluate_all(LAST_REVIEW_LINES)
    language = "english" if english else "chinese"
    layout_screenshot(page, f"long_names_{width}_{language}")
    page.context.close()

    assert set(LONG_NAMES) <= set(choices), choices
    assert widths["page"] <= widths["window"] == width, widths
    assert widths["list"] <= widths["box"], widths
    assert lines < 3.5, lines
