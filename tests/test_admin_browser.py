"""An operator's day in a real browser: headless Chromium driven by Playwright, against
the live test server. Each test checks the database afterwards and leaves a screenshot
in artifacts/screenshots/."""

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as settings_module
from django.contrib.auth.models import Permission, User
from django.core.cache import cache
from playwright.sync_api import Browser, Page, expect, sync_playwright

from caselibrary.models import CaseLibrary, FaultCategory
from diagnosis.models import DiagnosisSession
from feedback.models import BadCaseReview, ReviewTag
from tests.conftest import CHROMIUM
from tests.factories import (
    BadCaseReviewFactory,
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FaultCategoryFactory,
    ToolInvocationFactory,
)

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
PASSWORD = "correct horse battery staple"
OPERATOR_PERMISSIONS = [
    "view_diagnosissession",
    "view_badcase",
    "change_badcase",
    "view_caselibrary",
    "change_caselibrary",
    "view_faultcategory",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright's sync API keeps an event loop running in this thread, and Django
    # refuses ORM calls from a thread with a running loop unless told otherwise.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM,
                headless=True,
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def operator(transactional_db) -> User:  # type: ignore[no-untyped-def]
    """A staff member with the permissions an SRE reviewer gets, not a superuser."""
    user = User.objects.create_user("ops.zhang", password=PASSWORD, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=OPERATOR_PERMISSIONS))
    # Flushed by an earlier transactional test together with the seed migration's rows.
    for code in ("GENERAL", "DATABASE", "NETWORK"):
        FaultCategoryFactory(code=code)
    return user


def log_in(browser, live_server, operator, *, width: int = 1400, english: bool = True) -> Page:  # type: ignore[no-untyped-def]
    # The console speaks Chinese whatever the browser asks. English pages keep the
    # screenshots readable on machines without CJK fonts (the Chinese labels are checked
    # by the server-side tests): chosen the way an operator's switcher choice is kept.
    context = browser.new_context(locale="en-US", viewport={"width": width, "height": 1000})
    if english:
        context.add_cookies(
            [{"name": settings_module.LANGUAGE_COOKIE_NAME, "value": "en", "url": live_server.url}]
        )
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", operator.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/admin/")
    page.base_url = live_server.url
    return page


def finish(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    page.context.close()


@pytest.fixture
def page(browser, live_server, operator, settings, request) -> Iterator[Page]:  # type: ignore[no-untyped-def]
    # The live server speaks plain HTTP.
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    cache.clear()
    page = log_in(browser, live_server, operator)
    yield page
    finish(page, request.node.name)


def visible_session_ids(page: Page) -> set[str]:
    return set(page.locator("#result_list tbody th.field-session_id a").all_inner_texts())


def test_the_bad_case_list_shows_only_not_useful_sessions(page: Page) -> None:
    for n in range(3):
        DiagnosisSessionFactory(session_id=f"bad-{n}", not_useful=True, evidence_score=65 - 20 * n)
    DiagnosisSessionFactory(session_id="fine-1", useful=True, evidence_score=65)
    DiagnosisSessionFactory(session_id="silent-1", succeeded=True)
    DiagnosisSessionFactory(session_id="running-1")

    page.get_by_role("link", name="Bad cases", exact=True).first.click()

    expect(page.locator("#result_list")).to_be_visible()
    shown = visible_session_ids(page)
    in_database = set(
        DiagnosisSession.objects.filter(feedback="not_useful").values_list("session_id", flat=True)
    )
    assert shown == in_database == {"bad-0", "bad-1", "bad-2"}


def test_an_operator_marks_a_bad_case_triaged_with_a_note(page: Page) -> None:
    session = DiagnosisSessionFactory(
        session_id="bad-504",
        not_useful=True,
        evidence_score=65,
        query="order-service returns 504 since 14:05, how do I dig in?",
        answer="Root cause: the connection pool is exhausted.\n1. Grow the pool\n2. Add a breaker",
    )
    before = DiagnosisSession.objects.values().get(pk=session.pk)

    page.goto(f"{page.base_url}/admin/feedback/badcase/")
    page.get_by_role("link", name="bad-504").first.click()
    page.select_option("#id_review_state", "triaged")
    page.fill("#id_review_note", "检索命中了 runbook，但答案没用上：看 prompt")
    page.click("input[name=_save]")

    expect(page.locator(".messagelist .success")).to_be_visible()
    review = BadCaseReview.objects.get(session_id="bad-504")
    assert (review.state, review.note, review.reviewed_by) == (
        "triaged",
        "检索命中了 runbook，但答案没用上：看 prompt",
        "ops.zhang",
    )
    assert review.reviewed_at is not None
    assert DiagnosisSession.objects.values().get(pk=session.pk) == before
    row = page.locator("#result_list tbody tr", has_text="bad-504")
    expect(row.locator(".review-state")).to_have_text("Triaged")


def test_an_operator_changes_a_case_category_from_the_list(page: Page) -> None:
    CaseLibraryFactory(
        title="Slow queries take the orders database down",
        source_type="AUTO",
        created_by="system",
        updated_by="system",
    )
    CaseLibraryFactory(title="DNS lookups time out", fault_category="NETWORK")

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/")
    row = page.locator(
        "#result_list tbody tr", has_text="Slow queries take the orders database down"
    )
    row.locator("select[name$=fault_category]").select_option("DATABASE")
    row.locator("input[name$=error_code]").fill("MYSQL-1205")
    page.click("#changelist-form input[name=_save]")

    expect(page.locator(".messagelist .success")).to_be_visible()
    case = CaseLibrary.objects.get(title="Slow queries take the orders database down")
    assert (case.fault_category, case.error_code, case.updated_by) == (
        "DATABASE",
        "MYSQL-1205",
        "ops.zhang",
    )
    assert CaseLibrary.objects.get(title="DNS lookups time out").updated_by == "ops.curator"
    expect(
        page.locator(
            "#result_list tbody tr", has_text="Slow queries take the orders database down"
        ).locator("select[name$=fault_category]")
    ).to_have_value("DATABASE")


def test_an_operator_opens_the_overview_from_the_index(page: Page) -> None:
    DiagnosisSessionFactory.create_batch(3, useful=True, evidence_score=65)
    DiagnosisSessionFactory(not_useful=True, evidence_score=0)
    DiagnosisSessionFactory(succeeded=True, evidence_score=20)

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "admin_index.png"), full_page=True)
    page.locator("#overview-link a").first.click()

    expect(page).to_have_url(re.compile(r"/admin/overview/$"))
    expect(page.locator("svg#score-chart rect.bar")).to_have_count(
        18
    )  # six bands, three kinds of feedback
    expect(page.locator("svg#day-chart rect.bar").first).to_be_visible()
    finished = DiagnosisSession.objects.exclude(status="RUNNING").count()
    given = DiagnosisSession.objects.filter(feedback__isnull=False).count()
    bad = DiagnosisSession.objects.filter(feedback="not_useful").count()
    expect(page.locator("#feedback-rate .tile-value")).to_have_text(f"{given / finished:.1%}")
    expect(page.locator("#bad-case-rate .tile-value")).to_have_text(f"{bad / given:.1%}")
    page.get_by_role("link", name="last 7 days").click()
    expect(page.locator(".overview-window strong")).to_have_text("last 7 days")


def test_the_console_speaks_chinese_to_an_english_browser_until_english_is_picked(
    browser, live_server, operator, settings
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    settings.LANGUAGE_CODE = "zh-hans"
    page = log_in(browser, live_server, operator, english=False)

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    page.select_option("#language-choice", "en")

    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.goto(f"{page.base_url}/admin/feedback/badcase/")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#language-choice")).to_have_value("en")
    finish(page, "language_switched_to_english")


# The page's width, and the list's: a list wider than its box scrolls its last columns away.
LIST_WIDTHS = """() => ({page: document.documentElement.scrollWidth, window: window.innerWidth,
  list: document.querySelector('#changelist .results').scrollWidth,
  box: document.querySelector('#changelist .results').clientWidth})"""


def test_the_case_list_fits_a_1366_pixel_window(browser, live_server, operator, settings) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    FaultCategoryFactory(code="APPLICATION_ERROR", name="Application errors and exceptions")
    session = DiagnosisSessionFactory(
        session_id="0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13", useful=True
    )
    CaseLibraryFactory(
        title="订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时" * 2,
        diagnosis=session,
        source_type="AUTO",
        error_code="java.util.concurrent.RejectedExecutionException",
        fault_category="APPLICATION_ERROR",
        created_by="system",
        updated_by="ops.curator.with.a.long.name",
    )
    CaseLibraryFactory.create_batch(5)
    page = log_in(browser, live_server, operator, width=1366)

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/")
    expect(page.locator("#result_list")).to_be_visible()

    widths = page.evaluate(LIST_WIDTHS)
    finish(page, "case_list_at_1366")
    assert widths["page"] <= widths["window"] == 1366, widths
    assert widths["list"] <= widths["box"], widths


# A select's options as the operator reads them (their text and tooltip), and its own
# tooltip and chosen text.
SELECT_TEXTS = """select => ({title: select.title, chosen: select.selectedOptions[0].text,
  options: [...select.options].map(option => [option.value, option.text, option.title])})"""
# Names as the seed migration writes them: both languages in one, the longest of them.
CATEGORY_NAMES = {
    "APPLICATION_ERROR": "应用错误 / Application error",
    "DATABASE": "数据库 / Database",
    "DEPLOYMENT_CONFIG": "发布与配置 / Deployment & config",
    "GENERAL": "未分类 / General",
    "NETWORK": "网络 / Network",
}


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_case_list_names_each_category_in_its_select_and_still_fits_a_1366_pixel_window(
    browser, live_server, operator, settings, english
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    for code, name in CATEGORY_NAMES.items():
        FaultCategory.objects.update_or_create(code=code, defaults={"name": name})
    CaseLibraryFactory(
        title="订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时" * 2,
        diagnosis=DiagnosisSessionFactory(
            session_id="0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13", useful=True
        ),
        source_type="AUTO",
        error_code="java.util.concurrent.RejectedExecutionException",
        fault_category="DEPLOYMENT_CONFIG",
        updated_by="ops.curator.with.a.long.name",
    )
    CaseLibraryFactory.create_batch(3, fault_category="APPLICATION_ERROR")
    page = log_in(browser, live_server, operator, width=1366, english=english)

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/")
    row = page.locator("#result_list tbody tr", has_text="订单服务在高峰期")
    expect(row).to_have_count(1)
    texts = row.locator("select[name$=fault_category]").evaluate(SELECT_TEXTS)
    widths = page.evaluate(LIST_WIDTHS)
    finish(page, f"case_categories_at_1366_{'english' if english else 'chinese'}")

    # Each option names its category, its code in the option's tooltip; the chosen one's
    # code and whole name are in the select's tooltip, should the column cut it short.
    taxonomy = FaultCategory.objects.order_by("code").values_list("code", "name")
    assert texts["options"] == [[code, name, code] for code, name in taxonomy]
    assert texts["chosen"] == "发布与配置 / Deployment & config"
    assert texts["title"] == "DEPLOYMENT_CONFIG · 发布与配置 / Deployment & config"
    assert widths["page"] <= widths["window"] == 1366, widths
    assert widths["list"] <= widths["box"], widths


# A cell's text, measured as the operator sees it: a table cell is as tall as its row,
# the lines of text inside it are not.
TEXT_HEIGHT = """cell => { const range = document.createRange(); range.selectNodeContents(cell);
  return range.getBoundingClientRect().height; }"""
# How many lines an element's text takes.
LINES = """el => { const range = document.createRange(); range.selectNodeContents(el);
  return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; }"""
# The lines an element shows: its height in lines of its text.
SHOWN_LINES = """el => Math.round(el.getBoundingClientRect().height /
  parseFloat(getComputedStyle(el).lineHeight))"""
# Whether the middle of an element is on screen, not hidden under or cut off by another.
SEEN = """el => { const r = el.getBoundingClientRect();
  return el.contains(document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)); }"""

# The contrast ratio (WCAG 2) of an element's text against the header's background.
CONTRAST = """selector => {
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const luminance = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const text = luminance(getComputedStyle(document.querySelector(selector)).color);
  const ground = luminance(getComputedStyle(document.querySelector('#header')).backgroundColor);
  return (Math.max(text, ground) + 0.05) / (Math.min(text, ground) + 0.05);
}"""
PAGE_WIDTHS = "() => ({page: document.documentElement.scrollWidth, window: window.innerWidth})"


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_tool_invocations_keep_their_short_columns_on_one_line_at_1366_pixels(
    browser, live_server, operator, settings, english
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    session = DiagnosisSessionFactory(
        session_id="0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13", not_useful=True, evidence_score=65
    )
    for _ in range(4):
        ToolInvocationFactory(
            session=session,
            tool_name="QueryIncidentHistoryTools",
            query="cart-service 容器日志 轮转 ENOSPC 近 90 天故障记录",
            duration_ms=1027,
        )
    ToolInvocationFactory(
        session=session,
        status="FAILED",
        match_level=None,
        hit_count=0,
        error_message="HTTP 503 Service Unavailable from docs-search: upstream connect error "
        "or disconnect/reset before headers. reset reason: connection termination " * 3,
    )
    page = log_in(browser, live_server, operator, width=1366, english=english)

    for url in (
        f"/admin/diagnosis/diagnosissession/{session.pk}/change/",
        f"/admin/feedback/badcase/{session.pk}/change/",
    ):
        page.goto(page.base_url + url)
        table = page.locator("table.invocations")
        expect(table.locator("tbody tr")).to_have_count(5)

        widths = page.evaluate(PAGE_WIDTHS)
        assert widths["page"] <= widths["window"] == 1366, (url, widths)
        for row in table.locator("tr").all():
            cells = row.locator("th, td")
            one_line = cells.nth(0).evaluate(TEXT_HEIGHT)  # the tool's name: one word
            heights = [cells.nth(n).evaluate(TEXT_HEIGHT) for n in (1, 2, 3, 4, 7, 8)]
            assert heights == [one_line] * 6, (url, row.inner_text(), heights)
        # The last column is there to be seen, scrolled to if the table is wider.
        last = table.locator("thead th").last
        last.scroll_into_view_if_needed()
        assert last.evaluate(SEEN), url
    finish(page, f"invocations_at_1366_{'english' if english else 'chinese'}")


QUESTION = "订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时"


def test_the_bad_case_list_fits_a_1366_pixel_window_each_session_id_on_two_lines_at_most(
    browser, live_server, operator, settings
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    tag = ReviewTag.objects.create(name="needs-runbook")
    for n in range(3):
        review = BadCaseReviewFactory(
            session__session_id=f"0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c1{n}",
            session__evidence_score=65,
            session__query=QUESTION * 3,
            reviewed_by="ops.reviewer.with.a.long.name",
            assignee=operator,
        )
        review.tags.add(tag)
    page = log_in(browser, live_server, operator, width=1366, english=False)

    page.goto(f"{page.base_url}/admin/feedback/badcase/")
    expect(page.locator("#result_list tbody tr")).to_have_count(3)

    widths = page.evaluate(LIST_WIDTHS)
    # A UUID is cut at the end of its second line (the lines below it are hidden).
    id_lines = page.locator("#result_list tbody th.field-session_id a").first.evaluate(SHOWN_LINES)
    # The score's label in one piece, under its badge or beside it.
    label_lines = page.locator("#result_list tbody .confident-but-wrong").first.evaluate(LINES)
    finish(page, "bad_case_list_at_1366")
    assert widths["page"] <= widths["window"] == 1366, widths
    assert widths["list"] <= widths["box"], widths
    assert (id_lines, label_lines) == (2, 1)


def test_the_language_label_reads_well_on_the_header_of_a_change_form(
    browser, live_server, operator, settings
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    session = DiagnosisSessionFactory(not_useful=True, evidence_score=65)
    page = log_in(browser, live_server, operator, english=False)

    contrasts = {}
    for url in ("/admin/feedback/badcase/", f"/admin/feedback/badcase/{session.pk}/change/"):
        page.goto(page.base_url + url)
        expect(page.locator("#language-switcher label")).to_have_text("语言")
        contrasts[url] = page.evaluate(CONTRAST, "#language-switcher label")
    finish(page, "language_label_on_a_change_form")
    # WCAG's "AA" for small text: 4.5 to 1.
    assert all(contrast >= 4.5 for contrast in contrasts.values()), contrasts
