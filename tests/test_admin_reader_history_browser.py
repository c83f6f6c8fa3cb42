"""What readers said, on a 1280-pixel screen: the short columns (when, the verdict, the
reason, what it was sent with) stay on one line beside a long comment and correction, on
the bad-case page and on the session's page, in Chinese and in English."""

import pytest
from playwright.sync_api import expect

from tests.factories import DiagnosisSessionFactory, FeedbackEntryFactory
from tests.test_admin_browser import (  # noqa: F401
    LINES,
    PAGE_WIDTHS,
    browser,
    finish,
    log_in,
    operator,
)

pytestmark = pytest.mark.browser

COMMENT = "答案把主从延迟当成了连接池耗尽，照着做了一遍没有用，浪费了半小时。" * 3
# Whether the table ends within its fieldset, which cuts off what sticks out.
FITS = """table => table.getBoundingClientRect().right
  <= table.closest('fieldset').getBoundingClientRect().right + 0.5"""
CORRECTION = (
    "根因：MySQL 主从延迟导致读到旧数据。处理：1. 把订单查询切回主库读；"
    "2. 查看 Seconds_Behind_Master 并排查大事务；3. 恢复后再切回从库。"
) * 3


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_short_columns_of_what_readers_said_stay_on_one_line_at_1280_pixels(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    settings,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    session = DiagnosisSessionFactory(session_id="history-1280", not_useful=True)
    FeedbackEntryFactory(session=session, comment=COMMENT, correction=CORRECTION)
    FeedbackEntryFactory(
        session=session, reason="other", comment=COMMENT, correction="", channel="api_key"
    )
    page = log_in(browser, live_server, operator, width=1280, english=english)

    for url in (
        f"/admin/feedback/badcase/{session.pk}/change/",
        f"/admin/diagnosis/diagnosissession/{session.pk}/change/",
    ):
        page.goto(page.base_url + url)
        table = page.locator("table.feedback-history")
        expect(table.locator("tbody tr")).to_have_count(2)

        for row in table.locator("tr").all():
            cells = row.locator("th, td")
            lines = [cells.nth(n).evaluate(LINES) for n in (0, 1, 2, 5)]
            assert lines == [1, 1, 1, 1], (url, row.inner_text(), lines)
        widths = page.evaluate(PAGE_WIDTHS)
        assert widths["page"] <= widths["window"] == 1280, (url, widths)
        assert table.evaluate(FITS), url
    finish(page, f"reader_history_at_1280_{'english' if english else 'chinese'}")
