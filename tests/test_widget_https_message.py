"""A page that points the feedback widget at an http:// endpoint of a service that takes HTTPS
only gets a 403 `https_required`: the widget says the service needs HTTPS and that the
page's maintainer can fix it, not that the reader's link expired (reloading would not help).
A refused token keeps its own message (tests/test_feedback_widget_messages_browser.py).
Screenshots go to artifacts/screenshots/."""

import re

import pytest
from playwright.sync_api import expect

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.test_admin_browser import browser, finish  # noqa: F401
from tests.test_feedback_widget_browser import chat_page, open_widget  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("embedding_model_loaded")]

HTTPS_NEEDED = {
    "zh": "反馈服务需要 HTTPS：请联系页面维护者。",
    "en": "The feedback service requires HTTPS: please contact the maintainer of this page.",
}
RETRY = re.compile("重试|Try again")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_http_endpoint_refused_for_https_asks_for_the_page_s_maintainer_not_a_reload(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    settings,
    lang,
) -> None:
    # The live server speaks plain HTTP: with the redirect on, /api/feedback refuses it.
    settings.SECURE_SSL_REDIRECT = True
    DiagnosisSessionFactory(session_id="https-1", succeeded=True)
    page = open_widget(browser, live_server, chat_page, "https-1", lang=lang)

    page.locator("button[data-feedback=useful]").click()

    expect(page.get_by_role("alert")).to_have_text(HTTPS_NEEDED[lang])
    expect(page.get_by_role("button", name=RETRY)).to_have_count(0)
    finish(page, f"feedback-widget-https-required-{lang}")
    assert DiagnosisSession.objects.get(session_id="https-1").feedback is None
