"""The feedback widget's "Change", in a real browser on a page of another origin: however the
reader presses it (a click, a double click, Enter or Space), the two verdict buttons come
back with focus on the first, and nothing is sent until the reader chooses again. A double
click's second click lands where "Change" was, which the first click hid."""

import pytest
from playwright.sync_api import Page, expect

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.test_admin_browser import browser  # noqa: F401
from tests.test_feedback_widget_browser import chat_page, open_widget  # noqa: F401
from tests.test_feedback_widget_verdict_browser import TEXT, bodies_sent, button

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("embedding_model_loaded")]


def rate(page: Page, t: dict[str, str], verdict: str) -> None:
    if verdict == "useful":
        button(page, t["useful"]).click()
        expect(page.get_by_role("status")).to_have_text(t["thanks"])
    else:
        button(page, t["not_useful"]).click()
        page.get_by_role("radio", name=t["reason"]).check()
        button(page, t["send"]).click()
        expect(page.get_by_role("status")).to_have_text(t["thanks_not_useful"])


def press_change(page: Page, t: dict[str, str], way: str) -> None:
    change = button(page, t["change"])
    if way == "click":
        change.click()
    elif way == "double click":
        change.dblclick()
    else:
        change.focus()
        page.keyboard.press(way)


@pytest.mark.parametrize("verdict", ["useful", "not_useful"])
@pytest.mark.parametrize("way", ["click", "double click", "Enter", "Space"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_change_brings_the_verdict_buttons_back_with_focus_on_the_first(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
    way,
    verdict,
) -> None:
    t = TEXT[lang]
    session_id = f"change-focus-{lang}-{way.replace(' ', '-')}-{verdict}"
    DiagnosisSessionFactory(session_id=session_id, succeeded=True)
    page = open_widget(browser, live_server, chat_page, session_id, lang=lang)
    sent = bodies_sent(page)
    rate(page, t, verdict)

    press_change(page, t, way)

    expect(button(page, t["useful"])).to_be_focused()
    expect(button(page, t["not_useful"])).to_be_visible()
    expect(button(page, t["change"])).to_be_hidden()
    # The reader goes on from there with the keyboard: Tab reaches the second verdict.
    page.keyboard.press("Tab")
    expect(button(page, t["not_useful"])).to_be_focused()
    assert len(sent) == 1
    assert DiagnosisSession.objects.get(session_id=session_id).feedback == verdict
    page.context.close()


def test_after_a_double_click_on_change_a_click_on_the_page_still_moves_focus_there(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
) -> None:
    t = TEXT["zh"]
    DiagnosisSessionFactory(session_id="change-focus-after", succeeded=True)
    page = open_widget(browser, live_server, chat_page, "change-focus-after")
    rate(page, t, "useful")
    button(page, t["change"]).dblclick()
    expect(button(page, t["useful"])).to_be_focused()

    # The next click is a click of its own: it goes where the reader puts it.
    button(page, t["not_useful"]).click()
    expect(page.get_by_role("radio", name="根因不对")).to_be_focused()
    page.locator("h1").click()
    expect(page.locator("body")).to_be_focused()
    page.context.close()
