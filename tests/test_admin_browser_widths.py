"""The admin on a 1366-pixel laptop screen with a team's real queue, in Chinese and in
English: the bad-case list and a session's tool invocations without scrolling sideways."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession
from feedback.models import BadCaseReview, ReviewState, ReviewTag
from tests import admin_list_widths
from tests.admin_list_widths import QUESTION
from tests.factories import (
    BadCaseReviewFactory,
    DiagnosisSessionFactory,
    ToolInvocationFactory,
)
from tests.test_admin_browser import (  # noqa: F401
    LIST_WIDTHS,
    PASSWORD,
    SCREENSHOTS,
    browser,
    log_in,
)

pytestmark = pytest.mark.browser

# Fixtures shared with the other modules, taken by name.
admin_user = admin_list_widths.admin_user


# --- A laptop's screen (1366 by 768, the navigation open) with a team's real queue ------

LAYOUT_SCREENSHOTS = "layout_1366"


# Questions as the team asks them: Chinese and English, short and past the excerpt's 80
# characters, quoting hosts, metrics and error codes.
REAL_QUESTIONS = (
    "P1: logistics-tracker-consumer lag on trade-events is 261,000. More partitions or consumers?",
    "线上问题：node-sg-1-42 的 /data 用了 99%，order-service 报 DiskPressure，先清什么？急",
    "urgent - redis-logistics-cache-01 latency 1ms -> 2550ms around 11:15, logistics-tracker "
    "thread pool exhausted, is it the big keys again?",
    "node-sh-a-01 的 / 用了 93%，cart-service 报 ENOSPC，先清什么？",
    "Someone hand-edited the recommendation-api ConfigMap (kafka.consumer.max.poll.records). "
    "How to assess the blast radius?",
    "Several auth-service pods restarted around 06:50 with OOMKilled. Next steps?",
    "线上问题：Amap geocoding API 从 今天晚上 19:50 开始大量 ERR_RATE_LIMITED，"
    "是我们的重试放大了吗？",
    "coupon-service at 60% of its 1-core limit but p99 is 4200ms. CFS throttling?",
    QUESTION,
    "payment-gateway 调用 bank-adapter 大量 ReadTimeout，连接池 200 全部占满，要扩容还是限流？",
    "Why does search-api return 502 from the ingress after the 14:05 deploy?",
    "order-service 报 java.util.concurrent.RejectedExecutionException，线程池满了怎么办？",
)


# The longest times each language writes (Django's formats): the month with the longest
# name, a two-digit day and a two-digit afternoon hour ("Sept. 30, 2026, 10:59 p.m.",
# "2026年12月31日 22:59"), so the layout holds on any day and at any hour of the run.
LONGEST_TIMES = {
    True: datetime(2026, 9, 30, 22, 59, tzinfo=UTC),
    False: datetime(2026, 12, 31, 22, 59, tzinfo=UTC),
}


def at_the_longest_times(english: bool) -> None:
    """Every session, review and case made, rated, reviewed and changed at the longest time
    the language writes, rather than at the time of the run."""
    when = LONGEST_TIMES[english]
    DiagnosisSession.objects.update(created_at=when, finished_at=when, feedback_at=when)
    BadCaseReview.objects.exclude(reviewed_at=None).update(reviewed_at=when)
    CaseLibrary.objects.update(created_at=when, updated_at=when)


def real_bad_cases() -> None:
    """A queue as reviewers leave it: some not reviewed yet, the rest triaged or resolved
    by a reviewer with an everyday user name, a few tagged."""
    reviewer = User.objects.create_user("qa_reviewer", password=PASSWORD, is_staff=True)
    tag = ReviewTag.objects.create(name="needs-runbook")
    scores = (0, 20, 45, 65, 80, 12)
    for n, query in enumerate(REAL_QUESTIONS):
        session_id = f"0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c{n:02d}"
        if n % 3 == 0:
            DiagnosisSessionFactory(
                session_id=session_id, query=query, not_useful=True, evidence_score=scores[n % 6]
            )
            continue
        review = BadCaseReviewFactory(
            session__session_id=session_id,
            session__query=query,
            session__evidence_score=scores[n % 6],
            state=ReviewState.TRIAGED if n % 3 == 1 else ReviewState.RESOLVED,
            reviewed_by=reviewer.username,
            assignee=reviewer,
        )
        if n % 4 == 1:
            review.tags.add(tag)


def layout_screenshot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    (SCREENSHOTS / LAYOUT_SCREENSHOTS).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / LAYOUT_SCREENSHOTS / f"{name}.png"))


# The question's column beside nine others kept whole, the navigation and the filters:
# it had 110 px, over up to seven lines (five rows a screen); now 140 px or so, over
# three lines at most.
QUESTION_MIN_WIDTH = 130


# The words of the cells that a line break cuts in two: a word is what lies between
# spaces and the punctuation a line may break after ("qa_reviewer，2026年5月4日 10:15").
BROKEN_WORDS = """cells => cells.flatMap(cell => {
  const broken = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/[^\\s，、；：。]+/gu)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(word[0]);
    }
  }
  return broken;
})"""


# How many rows a screen holds, the list scrolled to its first row.
ROWS_ON_A_SCREEN = """() => { const rows = [...document.querySelectorAll('#result_list tbody tr')];
  const top = rows[0].getBoundingClientRect().top;
  return rows.filter(row => row.getBoundingClientRect().bottom - top <= window.innerHeight)
    .length; }"""


# The width of a list's column, found by its field's name.
COLUMN_WIDTH = """name => document.querySelector(`#result_list thead th.column-${name}`)
  .getBoundingClientRect().width"""


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_bad_case_list_keeps_states_and_names_whole_and_gives_the_question_the_room_left(
    browser,  # noqa: F811
    live_server,
    admin_user,
    settings,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    real_bad_cases()
    at_the_longest_times(english)
    page = log_in(browser, live_server, admin_user, width=1366, english=english)
    page.set_viewport_size({"width": 1366, "height": 768})

    page.goto(page.base_url + "/admin/feedback/badcase/")
    expect(page.locator("#result_list tbody tr")).to_have_count(len(REAL_QUESTIONS))
    cells = page.locator(
        "#result_list tbody :is(.field-review_state_column, .field-reviewed,"
        " .field-assignee_column)"
    )
    broken = cells.evaluate_all(BROKEN_WORDS)
    question = page.evaluate(COLUMN_WIDTH, "query_excerpt")
    rows = page.evaluate(ROWS_ON_A_SCREEN)
    widths = page.evaluate(LIST_WIDTHS)
    layout_screenshot(page, f"bad_cases_{'english' if english else 'chinese'}")
    page.context.close()

    assert broken == [], broken
    assert question >= QUESTION_MIN_WIDTH, question
    assert rows >= 10, rows
    assert widths["page"] <= widths["window"] == 1366, widths
    assert widths["list"] <= widths["box"], widths


# A session's calls as the agent makes them: most succeed with no error, one fails with
# the error the docs search really returns, queries from a few words to a PromQL line.
REAL_CALLS = (
    ("QueryLogsTools", "other", '{job="kubelet", node="node-sh-a-45"} |= "eviction"', None),
    ("SearchRunbookTools", "retrieval", "recommendation-api 应急预案 容器日志 轮转", None),
    ("SearchRunbookTools", "retrieval", "DiskPressure 驱逐 runbook", None),
    (
        "QueryInternalDocsTools",
        "retrieval",
        "No space left on device 处理方法",
        "HTTP 503 Service Unavailable from docs-search: upstream connect error or "
        "disconnect/reset before headers",
    ),
    ("DateTimeTools", "other", "time range: last 24h", None),
    ("QueryInternalDocsTools", "retrieval", "DiskPressure 驱逐 排查手册", None),
    (
        "QueryMetricsTools",
        "other",
        '1 - node_filesystem_avail_bytes{instance=~"node-sh-a-45.*", '
        'mountpoint="/var/lib/docker"} / node_filesystem_size_bytes{instance=~"node-sh-a-45.*",'
        ' mountpoint="/var/lib/docker"}',
        None,
    ),
)


# How far a box's content reaches past its right edge (scrolled to sideways).
OVERFLOW = "box => box.scrollWidth - box.clientWidth"


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_tool_invocations_fit_a_session_page_at_1366_pixels_without_scrolling_sideways(
    browser,  # noqa: F811
    live_server,
    admin_user,
    settings,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    session = DiagnosisSessionFactory(
        session_id="0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13", not_useful=True, evidence_score=20
    )
    for tool_name, kind, query, error in REAL_CALLS:
        ToolInvocationFactory(
            session=session,
            tool_name=tool_name,
            kind=kind,
            status="FAILED" if error else "SUCCESS",
            match_level="L1" if kind == "retrieval" and not error else None,
            hit_count=0 if error else 3,
            query=query,
            error_message=error,
            duration_ms=1257,
        )
    page = log_in(browser, live_server, admin_user, width=1366, english=english)
    page.set_viewport_size({"width": 1366, "height": 768})

    language = "english" if english else "chinese"
    overflows = {}
    for name, url in (
        ("session", f"/admin/diagnosis/diagnosissession/{session.pk}/change/"),
        ("bad_case", f"/admin/feedback/badcase/{session.pk}/change/"),
    ):
        page.goto(page.base_url + url)
        box = page.locator(".invocations-box")
        expect(box.locator("tbody tr")).to_have_count(len(REAL_CALLS))
        box.scroll_into_view_if_needed()
        overflows[name] = box.evaluate(OVERFLOW)
        layout_screenshot(page, f"invocations_{name}_{language}")
    page.context.close()

    assert overflows == {"session": 0, "bad_case": 0}, overflows
