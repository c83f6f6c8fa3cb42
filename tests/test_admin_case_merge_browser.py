"""The merge confirmation page in a real browser: the two case ids read as they are stored
(lower case), so an operator can copy one and search for it."""

import pytest
from playwright.sync_api import expect

from caselibrary.models import CaseMerge
from tests.factories import CaseLibraryFactory
from tests.near_duplicates import flag_near_duplicates
from tests.test_admin_browser import browser, finish, log_in, operator  # noqa: F401

pytestmark = pytest.mark.browser


def test_the_merge_confirmation_shows_both_case_ids_as_stored(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    settings,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    older = CaseLibraryFactory(
        case_id="06849914-e809-50ea-9c1d-3f2b7a6e4d10", title="订单库锁等待超时导致下单失败"
    )
    newer = CaseLibraryFactory(
        case_id="7b1e0c2a-5d4f-5e8b-a3c9-0f6d2e1b9a47", title="订单库锁等待超时，下单失败"
    )
    flag_near_duplicates(newer, older)
    page = log_in(browser, live_server, operator, english=False)

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/{newer.pk}/merge/{older.pk}/")
    headings = page.locator("table.merge-pair thead th")
    expect(headings).to_have_count(2)
    shown = headings.all_inner_texts()
    finish(page, "merge_confirmation")

    assert shown == [
        "保留（较早）: 06849914-e809-50ea-9c1d-3f2b7a6e4d10",
        "合并到它: 7b1e0c2a-5d4f-5e8b-a3c9-0f6d2e1b9a47",
    ]
    assert not CaseMerge.objects.exists()


@pytest.mark.parametrize("width", [1024, 1366])
def test_the_near_duplicates_fit_the_window_side_by_side(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    settings,
    width: int,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    # A long unbroken word (a class name, a URL) is what pushed the table past the window.
    runbook = (
        "1. 登录跳板机 jump-01，执行 SHOW ENGINE INNODB STATUS 查看锁等待。" * 12
        + "\n2. 查看 https://grafana.example.com/d/mysql-overview/mysql-overview?orgId=1&var-instance=orders-db-primary.prod.svc.cluster.local:3306&from=now-6h"
        + "\n3. com.mysql.cj.jdbc.exceptions.MySQLTransactionRollbackException"
    )
    older = CaseLibraryFactory(title="订单库锁等待超时导致下单失败", solution=runbook)
    newer = CaseLibraryFactory(title="订单库锁等待超时，下单失败", solution=runbook)
    flag_near_duplicates(newer, older)
    page = log_in(browser, live_server, operator, width=width, english=False)

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/{newer.pk}/change/")
    table = page.locator("table.near-duplicates")
    expect(table).to_be_visible()
    right = table.evaluate("t => t.getBoundingClientRect().right")
    box = page.evaluate("() => document.documentElement.clientWidth")
    finish(page, f"near_duplicates_at_{width}")

    assert right <= box, (right, box)
