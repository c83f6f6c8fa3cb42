"""The case list on a 1366-pixel laptop screen with a merged case: its "merged into"
line shows, and every column stays in view, in Chinese and in English."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from caselibrary.models import CaseLibrary
from caselibrary.services.duplicates import case_merge
from tests.near_duplicates import flag_near_duplicates
from tests.test_admin_browser import (  # noqa: F401
    LIST_WIDTHS,
    PASSWORD,
    browser,
    finish,
    log_in,
)
from tests.test_admin_browser_list_columns import CUT_SELECTS, cases

pytestmark = pytest.mark.browser

SOURCE_COLUMN = "() => document.querySelector('#result_list td.field-source_column').offsetWidth"


@pytest.fixture
def admin_user(transactional_db) -> User:  # type: ignore[no-untyped-def]
    return User.objects.create_superuser("ops.admin", password=PASSWORD)


def merge_one() -> None:
    older, newer = CaseLibrary.objects.order_by("created_at")[:2]
    flag_near_duplicates(newer, older)
    case_merge(case_id=newer.pk, other_id=older.pk, updated_by="ops.curator.with.a.long.name")


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_a_merged_case_is_marked_and_the_case_list_still_fits_1366_pixels(
    browser,  # noqa: F811
    live_server,
    admin_user,
    settings,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    cases()
    page = log_in(browser, live_server, admin_user, width=1366, english=english)
    page.goto(page.base_url + "/admin/caselibrary/caselibrary/")
    unmerged = page.evaluate(SOURCE_COLUMN)

    merge_one()
    page.reload()

    expect(page.locator("#result_list .case-merged a")).to_be_visible()
    widths = page.evaluate(LIST_WIDTHS)
    source = page.evaluate(SOURCE_COLUMN)
    cut = page.evaluate(CUT_SELECTS)
    finish(page, f"cases_merged_at_1366_{'english' if english else 'chinese'}")
    assert widths["page"] <= widths["window"] == 1366, widths
    assert widths["list"] <= widths["box"], widths
    assert cut == [], cut
    # The line wraps to the column the other lines make, rather than widening it.
    assert source <= unmerged, (source, unmerged)
