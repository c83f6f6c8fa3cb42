"""The feedback widget on a chat page with a strict Content-Security-Policy, in a real
browser: the page allows scripts and connections to the service and styles from itself
only, and the widget still draws with its own styles and sends. Screenshots go to
artifacts/screenshots/."""

import re

import pytest
from playwright.sync_api import Page, expect

from diagnosis.feedback_tokens import feedback_token_for
from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.test_admin_browser import browser, finish  # noqa: F401
from tests.test_feedback_widget_browser import ChatPage, chat_page, readme_widget_lines  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("embedding_model_loaded")]

# What the widget's stylesheet gives its box and its buttons (a browser's own style
# draws neither a border round a div nor this grey).
WIDGET_BORDER = "1px solid rgb(208, 215, 222)"
BUTTON_BACKGROUND = "rgb(246, 248, 250)"

# Stylesheets of the document, its own and adopted, that hold the widget's rules.
WIDGET_SHEETS = """() => [...document.styleSheets, ...(document.adoptedStyleSheets || [])]
    .filter((sheet) => [...sheet.cssRules].some((rule) => rule.selectorText === ".dfb"))
    .length"""

# Collects what the page's CSP refuses, from before the page's first script runs.
RECORD_VIOLATIONS = """window.violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.violations.push(event.effectiveDirective + " " + event.blockedURI);
});"""


def show_widgets(chat_page: ChatPage, *, service: str, session_ids: list[str]) -> None:  # noqa: F811
    """The README's lines for one widget a session, with the mount calls in a script
    file of the page's own, as a page whose CSP refuses inline scripts has them."""
    element, widget_script, mount = readme_widget_lines().strip().splitlines()
    found = re.fullmatch(r"<script>(.*)</script>", mount)
    assert found, "the README's third line is the mount call"
    elements, calls = [], []
    for n, session_id in enumerate(session_ids):
        element_id = f'"diagnosis-feedback-{n}"'
        elements.append(element.replace('"diagnosis-feedback"', element_id))
        calls.append(
            found.group(1)
            .replace('"diagnosis-feedback"', element_id)
            .replace("https://diagnosis.example.com", service)
            .replace('"walk-1"', f'"{session_id}"')
            .replace("FEEDBACK_TOKEN", feedback_token_for(session_id=session_id))
        )
    chat_page.scripts["/chat.js"] = "\n".join(calls)
    chat_page.html = (
        '<!doctype html><html><head><meta charset="utf-8"><title>Chat</title></head>'
        "<body><h1>order-service 504</h1><p>根因：连接池耗尽。</p>"
        + "".join(elements)
        + widget_script.replace("https://diagnosis.example.com", service)
        + '<script src="/chat.js"></script></body></html>'
    )


def open_page(browser, chat_page: ChatPage, *, init_script: str = "") -> tuple[Page, list[str]]:  # type: ignore[no-untyped-def]  # noqa: F811
    """The chat page, and the console's CSP complaints as they come."""
    context = browser.new_context(locale="zh-CN", viewport={"width": 900, "height": 900})
    context.add_init_script(RECORD_VIOLATIONS + init_script)
    page = context.new_page()
    page.set_default_timeout(15_000)
    complaints: list[str] = []
    page.on(
        "console",
        lambda message: (
            complaints.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.goto(chat_page.origin + "/")
    return page, complaints


def test_a_page_allowing_styles_only_from_itself_still_shows_the_widget_s_styles(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
) -> None:
    DiagnosisSessionFactory(session_id="csp-1", succeeded=True)
    service = live_server.url
    chat_page.headers["Content-Security-Policy"] = (
        f"default-src 'none'; style-src 'self'; script-src 'self' {service}; connect-src {service}"
    )
    show_widgets(chat_page, service=service, session_ids=["csp-1"])
    page, complaints = open_page(browser, chat_page)

    useful = page.get_by_role("button", name="有用")
    expect(page.locator(".dfb")).to_have_css("border", WIDGET_BORDER)
    expect(useful).to_have_css("background-color", BUTTON_BACKGROUND)
    useful.click()

    # The CSP's connect-src lets the widget send.
    expect(page.get_by_role("status")).to_have_text("感谢反馈，已记录。", timeout=15_000)
    violations = page.evaluate("window.violations")
    finish(page, "feedback-widget-strict-csp")
    assert violations == []
    assert complaints == []
    assert DiagnosisSession.objects.get(session_id="csp-1").feedback == "useful"


@pytest.mark.parametrize(
    ("browser_has", "init_script"),
    [
        ("constructable stylesheets", ""),
        # An older browser: the widget falls back to a <style> element.
        ("style elements only", "delete Document.prototype.adoptedStyleSheets;"),
    ],
)
def test_two_widgets_on_one_page_add_the_widget_s_styles_once(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    browser_has,
    init_script,
) -> None:
    DiagnosisSessionFactory(session_id="csp-2", succeeded=True)
    DiagnosisSessionFactory(session_id="csp-3", succeeded=True)
    show_widgets(chat_page, service=live_server.url, session_ids=["csp-2", "csp-3"])
    page, _ = open_page(browser, chat_page, init_script=init_script)

    expect(page.locator(".dfb")).to_have_count(2)
    expect(page.locator(".dfb").last).to_have_css("border", WIDGET_BORDER)
    assert page.evaluate(WIDGET_SHEETS) == 1
    expect(page.locator("style")).to_have_count(1 if init_script else 0)
    page.context.close()
