"""The tool invocations in a 1366-pixel window with the navigation open, and on a
1024-pixel screen, in Chinese and in English: every column in view without scrolling
sideways, the session's link among them (the row's only way to its session), with the
longest values each column can hold. A long query or error is cut to a few lines, its
first TOOLTIP_CHARS characters in its tooltip."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from diagnosis.admin_excerpts import TOOLTIP_CHARS, cut
from diagnosis.models import DiagnosisSession, ToolInvocation
from tests.admin_list_widths import admin_user  # noqa: F401
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory
from tests.test_admin_browser import SCREENSHOTS, browser, log_in  # noqa: F401
from tests.test_admin_browser_widths import LONGEST_TIMES

pytestmark = pytest.mark.browser

# The longest values the columns hold: a session id of 64 characters and a tool name of
# 128 without a space to break a line at, the largest counts an IntegerField keeps, a
# query as long as an OTLP call's arguments may be (16,384 characters) quoting a URL,
# and a traceback.
SESSION_ID = "agent-prod:checkout:2026-05-04T10:15:02Z:0b9f3c1e7d2a4c8e9f612a7"
TOOL_NAME = ("mcp__observability-platform-prod__" + "query_prometheus_range_vector" * 4)[:128]
LARGEST = 2_147_483_647
URL = "https://grafana.internal.example.com/d/orders-504/checkout?orgId=1&from=now-6h&to=now"
QUERY = ((URL + " ") * 200)[:16_384]
ERROR = (
    "timed out : Traceback (most recent call last):\n"
    '  File "/srv/app/.venv/lib/python3.11/site-packages/httpx/_transports/default.py", '
    "line 101, in map_httpcore_exceptions\n"
    "httpx.ConnectTimeout: timed out connecting to https://llm-gateway.internal.example.com/v1"
) * 20
# Each call: tool name, kind, status, match level, query, error.
CALLS = (
    (TOOL_NAME, "retrieval", "FAILED", None, QUERY, ERROR),
    ("search_internal_runbooks_and_postmortems", "retrieval", "SUCCESS", "L1", "x", None),
    ("QueryIncidentHistoryTools", "retrieval", "SUCCESS", "L0", URL, None),
    ("QueryMetricsTools", "other", "SUCCESS", "NONE", "订单服务 504 网关日志 连接池" * 20, None),
    ("DateTimeTools", "other", "FAILED", None, None, "HTTP 503 Service Unavailable"),
)


def a_session_of_long_calls(english: bool) -> DiagnosisSession:
    session = DiagnosisSessionFactory(session_id=SESSION_ID, not_useful=True, evidence_score=20)
    for tool_name, kind, status, level, query, error in CALLS:
        ToolInvocationFactory(
            session=session,
            tool_name=tool_name,
            kind=kind,
            status=status,
            match_level=level,
            hit_count=LARGEST,
            query=query,
            error_message=error,
            duration_ms=LARGEST,
        )
    ToolInvocation.objects.update(created_at=LONGEST_TIMES[english])
    return session


# Where the list's box, the window and the session's links end, and how far the table
# reaches past its box.
LIST_EDGES = """() => { const box = document.querySelector('#changelist .results');
  const links = [...document.querySelectorAll(
    '#result_list :is(th.column-session_link, td.field-session_link)')];
  return {box: box.getBoundingClientRect().right, window: document.documentElement.clientWidth,
    page: document.documentElement.scrollWidth, overflow: box.scrollWidth - box.clientWidth,
    links: Math.max(...links.map(link => link.getBoundingClientRect().right))}; }"""
# The same on a session's page: its table's box and its last column.
TABLE_EDGES = """() => { const box = document.querySelector('.invocations-box');
  const cells = [...document.querySelectorAll('table.invocations tr > :last-child')];
  return {box: box.getBoundingClientRect().right, window: document.documentElement.clientWidth,
    page: document.documentElement.scrollWidth, overflow: box.scrollWidth - box.clientWidth,
    links: Math.max(...cells.map(cell => cell.getBoundingClientRect().right))}; }"""
# A column's narrowest width, found by a selector for its cells.
NARROWEST = """selector => Math.min(...[...document.querySelectorAll(selector)].map(
  cell => cell.getBoundingClientRect().width))"""
# How many lines the longest excerpt of a column takes, and whether each cut one keeps
# the whole text in its tooltip.
EXCERPTS = """selector => [...document.querySelectorAll(selector)].map(span => {
  const range = document.createRange(); range.selectNodeContents(span);
  const lines = new Set([...range.getClientRects()]
    .filter(r => r.bottom <= span.getBoundingClientRect().bottom + 0.5)
    .map(r => Math.round(r.top))).size;
  return {lines, title: span.title}; })"""

# A query or an error read a few words a line: narrower, a line held five or six
# characters.
TEXT_MIN_WIDTH = 100
# A cut query or error: at most three lines.
MAX_LINES = 3


def screenshot(page: Page, name: str) -> None:
    (SCREENSHOTS / "tool_invocations").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "tool_invocations" / f"{name}.png"), full_page=True)


def assert_in_view(edges: dict) -> None:
    assert edges["page"] <= edges["window"], edges
    assert edges["overflow"] <= 0, edges
    assert edges["links"] <= edges["box"] + 0.5, edges
    assert edges["links"] <= edges["window"], edges


@pytest.mark.parametrize("width", [1366, 1024])
@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
@pytest.mark.parametrize("of_one_session", [False, True], ids=["all", "one_session"])
def test_every_column_of_the_tool_invocations_is_in_view_with_the_longest_values(
    browser,  # noqa: F811
    live_server,
    admin_user: User,  # noqa: F811
    settings,
    of_one_session: bool,
    english: bool,
    width: int,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    a_session_of_long_calls(english)
    page = log_in(browser, live_server, admin_user, width=width, english=english)
    page.set_viewport_size({"width": width, "height": 800})

    url = "/admin/diagnosis/toolinvocation/"
    page.goto(page.base_url + url + (f"?session={SESSION_ID}" if of_one_session else ""))
    expect(page.locator("#result_list tbody tr")).to_have_count(len(CALLS))
    edges = page.evaluate(LIST_EDGES)
    query = page.evaluate(NARROWEST, "#result_list td.field-query_excerpt")
    excerpts = page.evaluate(
        EXCERPTS,
        "#result_list :is(td.field-query_excerpt, td.field-error_excerpt) .invocation-excerpt",
    )
    language = "english" if english else "chinese"
    screenshot(page, f"list_{'one_session' if of_one_session else 'all'}_{width}_{language}")
    page.context.close()

    assert_in_view(edges)
    assert query >= TEXT_MIN_WIDTH, query
    assert max(excerpt["lines"] for excerpt in excerpts) <= MAX_LINES, excerpts
    titles = {excerpt["title"] for excerpt in excerpts}
    # Whole up to TOOLTIP_CHARS; longer, cut there (the call's own page has it whole).
    tooltips = {cut(text, TOOLTIP_CHARS)[0] for text in (QUERY, ERROR, URL, "x")}
    assert tooltips <= titles, titles


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_tool_invocations_of_a_session_page_fit_a_1024_pixel_screen_with_texts_readable(
    browser,  # noqa: F811
    live_server,
    admin_user: User,  # noqa: F811
    settings,
    english: bool,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    session = a_session_of_long_calls(english)
    page = log_in(browser, live_server, admin_user, width=1024, english=english)
    page.set_viewport_size({"width": 1024, "height": 800})

    page.goto(f"{page.base_url}/admin/diagnosis/diagnosissession/{session.pk}/change/")
    expect(page.locator("table.invocations tbody tr")).to_have_count(len(CALLS))
    page.locator(".invocations-box").scroll_into_view_if_needed()
    edges = page.evaluate(TABLE_EDGES)
    query = page.evaluate(NARROWEST, "table.invocations td:nth-child(6)")
    screenshot(page, f"session_page_1024_{'english' if english else 'chinese'}")
    page.context.close()

    assert_in_view(edges)
    assert query >= TEXT_MIN_WIDTH, query
