"""The demo page in docs/ loads the widget's script from the service its URL names: only
from a service on this machine or on the page's own host, never from any address a link
puts there (a link to the page would otherwise run a script of the linker's choosing)."""

from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.processes import ROOT
from tests.test_admin_browser import browser  # noqa: F401
from tests.test_feedback_widget_browser import chat_page, open_chat  # noqa: F401

pytestmark = [pytest.mark.browser]

DEMO = (ROOT / "docs" / "feedback-widget.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "service",
    [
        "data:text/javascript,window.__pwned=1;//",
        "javascript:window.__pwned=1;//",
        "https://widget.evil.example",
        "http://127.0.0.1.evil.example:8000",
    ],
)
def test_the_demo_page_refuses_a_service_neither_local_nor_its_own_host(
    browser,  # noqa: F811
    chat_page,  # noqa: F811
    service,
) -> None:
    chat_page.html = DEMO
    page = open_chat(browser, chat_page)

    page.goto(f"{chat_page.origin}/?service={quote(service, safe='')}&session=s&token=t")

    expect(page.locator("#refused")).to_be_visible()
    assert page.locator("script[src]").count() == 0
    assert page.evaluate("window.__pwned") is None
    page.context.close()
