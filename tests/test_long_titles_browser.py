"""A case whose title is one long unbroken word (a URL, a stack frame, a hash) keeps its
pages within the window: the heading and the breadcrumbs wrap instead of pushing the
page thousands of pixels wide, at a desktop width and on a phone."""

import pytest
from django.contrib.auth.models import User

from tests.factories import CaseLibraryFactory
from tests.test_admin_browser import PASSWORD, browser, finish, log_in  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture
def admin_user(transactional_db, settings) -> User:  # type: ignore[no-untyped-def]
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    return User.objects.create_superuser("ops.admin", password=PASSWORD)


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("suffix", ["change/", "history/", "delete/"])
def test_a_case_titled_with_one_long_word_keeps_its_pages_within_the_window(
    browser,  # noqa: F811
    live_server,
    admin_user,
    width,
    suffix,
) -> None:
    case = CaseLibraryFactory(title="LongTitle" + "W" * 240)
    page = log_in(browser, live_server, admin_user, width=width, english=True)

    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/{case.pk}/{suffix}")
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    finish(page, f"long_title_{suffix.strip('/')}_{width}")

    assert widths[0] <= widths[1] == width, widths
