"""Values the admin's lists cut short to fit a 1366-pixel window are whole in a tooltip,
and the case list's error-code input is wide enough for the codes operators type."""

import pytest
from playwright.sync_api import expect

from tests.factories import BadCaseReviewFactory, CaseLibraryFactory, FaultCategoryFactory
from tests.test_admin_browser import (  # noqa: F401
    LIST_WIDTHS,
    PASSWORD,
    browser,
    finish,
    log_in,
    operator,
)

pytestmark = pytest.mark.browser

# Each link of a column: its text, its tooltip, where it leads and whether it is cut.
LINKS = """selector => [...document.querySelectorAll(selector)].map(a => ({
  text: a.textContent, title: a.title, href: a.getAttribute('href'),
  cut: a.scrollWidth > a.clientWidth || a.scrollHeight > a.clientHeight}))"""
# Each error-code input: its value, its tooltip and whether the value is cut.
INPUTS = """() => [...document.querySelectorAll('#result_list td.field-error_code input')].map(
  input => ({value: input.value, title: input.title,
             cut: input.scrollWidth > input.clientWidth}))"""


@pytest.fixture
def page_settings(settings):  # type: ignore[no-untyped-def]
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    return settings


def test_a_session_id_cut_short_on_the_bad_case_list_is_whole_in_its_tooltip(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    page_settings,
) -> None:
    session_ids = ("demo-search-003", "demo-search-030", "0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13")
    for session_id in session_ids:
        BadCaseReviewFactory(session__session_id=session_id, session__evidence_score=20)
    page = log_in(browser, live_server, operator, width=1366, english=False)

    page.goto(f"{page.base_url}/admin/feedback/badcase/")
    expect(page.locator("#result_list tbody tr")).to_have_count(3)
    links = page.evaluate(LINKS, "#result_list tbody th.field-session_id a")
    finish(page, "bad_case_ids_with_tooltips")

    assert sorted(link["title"] for link in links) == sorted(session_ids)
    assert all(link["title"] == link["text"] for link in links), links
    assert all("/admin/feedback/badcase/" in link["href"] for link in links), links
    assert any(link["cut"] for link in links), links


@pytest.mark.parametrize("width", [1024, 1366, 1920])
def test_the_bad_case_list_shows_usual_session_ids_whole_at_every_width(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    page_settings,
    width: int,
) -> None:
    # Ids of a kind (demo-0179, demo-0180) told apart only by their end: cut to "demo-0…"
    # every row read the same.
    usual = ("demo-0179", "demo-0180", "s00019990", "demo-search-003", "pd0000000")
    for session_id in usual:
        BadCaseReviewFactory(session__session_id=session_id, session__evidence_score=20)
    page = log_in(browser, live_server, operator, width=width, english=False)

    page.goto(f"{page.base_url}/admin/feedback/badcase/")
    expect(page.locator("#result_list tbody tr")).to_have_count(len(usual))
    links = page.evaluate(LINKS, "#result_list tbody th.field-session_id a")
    widths = page.evaluate(LIST_WIDTHS)
    finish(page, f"bad_case_usual_ids_at_{width}")

    assert [link["text"] for link in links if link["cut"]] == [], links
    assert widths["page"] <= widths["window"] == width, widths


def test_a_case_title_cut_to_three_lines_is_whole_in_its_tooltip(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    page_settings,
) -> None:
    long_title = "订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时" * 2
    CaseLibraryFactory(title=long_title)
    CaseLibraryFactory(title="DNS lookups time out")
    page = log_in(browser, live_server, operator, width=1366, english=False)

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/")
    expect(page.locator("#result_list tbody tr")).to_have_count(2)
    links = page.evaluate(LINKS, "#result_list tbody th.field-title a")
    finish(page, "case_titles_with_tooltips")

    assert {link["title"] for link in links} == {long_title, "DNS lookups time out"}
    assert all("/admin/caselibrary/caselibrary/" in link["href"] for link in links), links
    assert [link["cut"] for link in links if link["title"] == long_title] == [True]


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_case_list_shows_usual_error_codes_whole_and_still_fits_1366_pixels(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    page_settings,
    english,
) -> None:
    FaultCategoryFactory(code="DEPLOYMENT_CONFIG")
    for code in ("CrashLoopBackOff", "RedisMemoryHigh", "ORA-00060"):
        CaseLibraryFactory(
            error_code=code,
            fault_category="DEPLOYMENT_CONFIG",
            updated_by="ops.curator.with.a.long.name",
        )
    long_code = "java.util.concurrent.RejectedExecutionException"
    CaseLibraryFactory(error_code=long_code, fault_category="DEPLOYMENT_CONFIG")
    page = log_in(browser, live_server, operator, width=1366, english=english)

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/")
    expect(page.locator("#result_list tbody tr")).to_have_count(4)
    inputs = {shown["value"]: shown for shown in page.evaluate(INPUTS)}
    widths = page.evaluate(LIST_WIDTHS)
    # A code longer than any input is whole in its tooltip, which follows what is typed.
    page.fill("#result_list input[value='ORA-00060']", "MySQLReplicationLagHigh")
    typed = page.locator("#result_list td.field-error_code input").evaluate_all(
        "inputs => inputs.map(input => input.title)"
    )
    finish(page, f"case_error_codes_at_1366_{'english' if english else 'chinese'}")

    assert widths["page"] <= widths["window"] == 1366, widths
    assert widths["list"] <= widths["box"], widths
    assert [code for code, shown in inputs.items() if shown["cut"]] == [long_code]
    assert inputs[long_code]["title"] == long_code
    assert "MySQLReplicationLagHigh" in typed
