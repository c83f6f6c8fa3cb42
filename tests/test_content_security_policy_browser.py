"""The console under its Content-Security-Policy in Chromium: the login, the lists, a
session's timeline, the overview and the language switcher run with the policy the
service sends, the browser refuses nothing, and what their scripts do still happens (the
scripts are the console's own files now, none written into a page). Screenshots go to
artifacts/screenshots/."""

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Browser, Dialog, Page, expect

from diagnosis.models import DiagnosisSession
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory
from tests.test_admin_browser import PASSWORD, browser, finish, log_in  # noqa: F401
from tests.test_admin_timeline_browser import admin_user, an_agent_run  # noqa: F401

pytestmark = pytest.mark.browser

# Whatever the policy refuses, from before the page's first script runs.
RECORD_VIOLATIONS = """window.violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.violations.push(
    `${event.effectiveDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
});"""


def watched(page: Page) -> Page:
    """The page records the policy's refusals on every page it opens from now on."""
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.complaints = []  # type: ignore[attr-defined]
    page.on(
        "console",
        lambda message: (
            page.complaints.append(message.text)  # type: ignore[attr-defined]
            if "Content Security Policy" in message.text
            else None
        ),
    )
    return page


def visit(page: Page, path: str) -> None:
    response = page.goto(f"{page.base_url}{path}")
    assert response is not None and response.ok, path
    assert "script-src 'self'" in response.headers["content-security-policy"], path


def refusals(page: Page) -> list[str]:
    return page.evaluate("window.violations") + page.complaints  # type: ignore[attr-defined]


@pytest.fixture
def console(browser: Browser, live_server, admin_user, settings, request) -> Iterator[Page]:  # type: ignore[no-untyped-def]  # noqa: F811
    # The live server speaks plain HTTP.
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    cache.clear()
    page = watched(log_in(browser, live_server, admin_user, width=1366))
    yield page
    finish(page, request.node.name)


def test_the_login_page_and_the_console_s_index_run_without_a_refusal(
    browser: Browser,  # noqa: F811
    live_server,
    admin_user,  # noqa: F811
    settings,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    context = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 1000})
    page = watched(context.new_page())
    page.base_url = live_server.url  # type: ignore[attr-defined]

    visit(page, "/admin/login/?next=/admin/")
    assert refusals(page) == []
    page.fill("#id_username", admin_user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")

    expect(page).to_have_url(f"{live_server.url}/admin/")
    expect(page.locator("#language-switcher")).to_be_visible()
    violations = refusals(page)
    finish(page, "csp_login_and_index")
    assert violations == []


def test_a_session_s_timeline_draws_its_bars_and_reads_an_opened_row_s_attributes(
    console: Page, make_client, settings
) -> None:
    an_agent_run(make_client("agent").raw_key, settings)
    session = DiagnosisSession.objects.get(session_id="browser-attributes")
    visit(console, "/admin/diagnosis/diagnosissession/")
    expect(console.locator("#result_list")).to_contain_text("browser-attributes")
    assert refusals(console) == []

    visit(console, f"/admin/diagnosis/diagnosissession/{session.pk}/change/")
    timeline = console.locator("#session-timeline")
    tool_row = timeline.locator("details", has_text="search_docs")
    tool_row.locator("summary").click()

    expect(tool_row.locator("table.attributes")).to_contain_text("diagnosis.hit_count")
    # The agent's span spans the whole track; the tool's, a child, is indented and shorter.
    root, tool = (timeline.locator("details").nth(0), tool_row)
    track = root.locator(".track").bounding_box()
    root_bar, tool_bar = root.locator(".bar").bounding_box(), tool.locator(".bar").bounding_box()
    assert track and root_bar and tool_bar
    assert root_bar["width"] == pytest.approx(track["width"], abs=2)
    assert 0 < tool_bar["width"] < root_bar["width"]
    expect(tool.locator(".label")).to_have_css("padding-left", "16px")
    expect(root.locator(".label")).to_have_css("padding-left", "0px")
    assert refusals(console) == []


def test_the_bad_case_list_names_a_cut_session_id_whole_in_its_tooltip(console: Page) -> None:
    long_id = "order-service-504-" + "x" * 40
    DiagnosisSessionFactory(session_id=long_id, not_useful=True)

    visit(console, "/admin/feedback/badcase/")

    expect(console.locator("#result_list th.field-session_id a")).to_have_attribute(
        "title", long_id
    )
    assert refusals(console) == []


def test_the_case_list_names_title_code_and_category_whole_in_their_tooltips(
    console: Page,
) -> None:
    # GENERAL, the case's, may be the seed migration's or flushed by an earlier test.
    FaultCategoryFactory(code="GENERAL")
    FaultCategoryFactory(code="DB_REPLICATION", name="Database replication lag")
    title = "订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时" * 2
    CaseLibraryFactory(title=title, error_code="RedisCommandTimeoutException")

    visit(console, "/admin/caselibrary/caselibrary/")

    expect(console.locator("#result_list th.field-title a")).to_have_attribute("title", title)
    code = console.locator("#result_list td.field-error_code input")
    expect(code).to_have_attribute("title", "RedisCommandTimeoutException")
    code.fill("PG-504")
    expect(code).to_have_attribute("title", "PG-504")
    category = console.locator("#result_list td.field-fault_category select")
    category.select_option("DB_REPLICATION")
    expect(category).to_have_attribute("title", "DB_REPLICATION · Database replication lag")
    assert refusals(console) == []


def test_switching_language_with_an_unsaved_note_still_asks_first(console: Page) -> None:
    session = DiagnosisSessionFactory(session_id="bad-504", not_useful=True)
    visit(console, f"/admin/feedback/badcase/{session.pk}/change/")
    console.locator("#id_review_note").press_sequentially("检索命中了 runbook")
    asked: list[Dialog] = []

    def stay_then_go(dialog: Dialog) -> None:
        asked.append(dialog)
        dialog.dismiss() if len(asked) == 1 else dialog.accept()

    console.on("dialog", stay_then_go)

    console.select_option("#language-choice", "zh-hans")
    expect(console.locator("#language-choice")).to_have_value("en")
    expect(console.locator("html")).to_have_attribute("lang", "en")
    assert [dialog.message for dialog in asked] == [
        "Switching the language reloads this page: the changes not saved yet will be lost. "
        "Switch anyway?"
    ]
    console.select_option("#language-choice", "zh-hans")

    expect(console.locator("html")).to_have_attribute("lang", "zh-hans")
    assert [dialog.type for dialog in asked] == ["confirm", "confirm"]
    assert refusals(console) == []


def test_the_overview_draws_its_charts_without_a_refusal(console: Page) -> None:
    DiagnosisSessionFactory(useful=True, evidence_score=65)
    DiagnosisSessionFactory(not_useful=True, evidence_score=30)

    visit(console, "/admin/overview/")

    expect(console.locator("#score-chart")).to_be_visible()
    assert refusals(console) == []


def test_the_api_docs_list_the_operations_without_a_refusal(
    browser: Browser,  # noqa: F811
    live_server,
) -> None:
    context = browser.new_context(locale="en-US", viewport={"width": 1366, "height": 1000})
    page = watched(context.new_page())
    page.base_url = live_server.url  # type: ignore[attr-defined]

    visit(page, "/api/docs")

    expect(page.locator(".opblock").first).to_be_visible()
    violations = refusals(page)
    finish(page, "csp_api_docs")
    assert violations == []
