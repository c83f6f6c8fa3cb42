"""The language menu from the keyboard: an operator who Tabs to it moves through the
languages with the arrow keys without the page reloading (WCAG 3.2.2, On Input), and
switches by pressing Enter or by leaving the menu with another language chosen. A choice
made with the mouse still switches at once, and a page with unsaved changes still asks
first."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.factories import DiagnosisSessionFactory
from tests.test_admin_browser import browser, operator, page  # noqa: F401
from tests.test_admin_language_switch_browser import NOTE, answer, bad_case_page

pytestmark = pytest.mark.browser

LIST = "/admin/feedback/badcase/?q=504"
# Set when the page starts to unload: the switcher's form sent, the page on its way out.
WATCH_UNLOAD = """() => { window.unloading = false;
  window.addEventListener('beforeunload', () => { window.unloading = true; }, true); }"""


def a_list(tab: Page) -> None:
    DiagnosisSessionFactory(session_id="bad-504", not_useful=True, query="order-service 504")
    tab.goto(tab.base_url + LIST)
    tab.evaluate(WATCH_UNLOAD)


def tab_to_the_language_menu(tab: Page) -> None:
    """Tabs from the top of the page until the menu has the focus."""
    for _ in range(30):
        tab.keyboard.press("Tab")
        if tab.evaluate("document.activeElement.id") == "language-choice":
            return
    raise AssertionError("the language menu is not reached with Tab")


def still_here(tab: Page) -> dict:
    """The page as it is: its language, the menu's choice, the focus, whether it unloads."""
    return tab.evaluate(
        """() => ({lang: document.documentElement.lang, unloading: window.unloading,
          choice: document.querySelector('#language-choice').value,
          focus: document.activeElement.id})"""
    )


def test_a_keyboard_user_moves_through_the_languages_without_switching(
    page: Page,  # noqa: F811
) -> None:
    a_list(page)
    tab_to_the_language_menu(page)

    page.keyboard.press("ArrowUp")  # 简体中文
    first = still_here(page)
    page.keyboard.press("ArrowDown")  # English again
    page.keyboard.press("ArrowUp")
    second = still_here(page)

    expected = {"lang": "en", "unloading": False, "choice": "zh-hans", "focus": "language-choice"}
    assert first == expected, first
    assert second == expected, second


def test_a_keyboard_user_switches_by_pressing_enter_and_stays_where_they_were(
    page: Page,  # noqa: F811
) -> None:
    a_list(page)
    asked = answer(page, accept=False)
    tab_to_the_language_menu(page)
    page.keyboard.press("ArrowUp")
    assert still_here(page)["lang"] == "en"

    page.keyboard.press("Enter")

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page).to_have_url(re.compile(r"/admin/feedback/badcase/\?q=504$"))
    assert asked == []


def test_a_keyboard_user_switches_by_leaving_the_menu_with_another_language_chosen(
    page: Page,  # noqa: F811
) -> None:
    a_list(page)
    tab_to_the_language_menu(page)
    page.keyboard.press("ArrowUp")
    assert still_here(page)["lang"] == "en"

    page.keyboard.press("Tab")

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page).to_have_url(re.compile(r"/admin/feedback/badcase/\?q=504$"))


def test_leaving_the_menu_on_the_pages_own_language_switches_nothing(
    page: Page,  # noqa: F811
) -> None:
    a_list(page)
    tab_to_the_language_menu(page)
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowDown")

    page.keyboard.press("Tab")
    left = still_here(page)

    assert left["lang"] == "en" and not left["unloading"], left
    assert left["focus"] != "language-choice", left
    # The next page is in English too: no language was kept for the operator.
    page.locator("div.breadcrumbs a").first.click()
    expect(page).to_have_url(page.base_url + "/admin/")
    expect(page.locator("html")).to_have_attribute("lang", "en")


def test_escape_takes_the_menu_back_to_the_pages_language(page: Page) -> None:  # noqa: F811
    a_list(page)
    tab_to_the_language_menu(page)
    page.keyboard.press("ArrowUp")

    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    left = still_here(page)

    assert left["lang"] == "en" and not left["unloading"], left
    assert left["choice"] == "en", left


def test_a_mouse_choice_still_switches_at_once(page: Page) -> None:  # noqa: F811
    a_list(page)
    # Looked through from the keyboard first: that does not hold the mouse's choice back.
    tab_to_the_language_menu(page)
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowDown")

    page.locator("#language-choice").click()
    page.select_option("#language-choice", "zh-hans")

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")


def test_a_keyboard_user_with_an_unsaved_note_is_asked_before_enter_switches_and_may_stay(
    page: Page,  # noqa: F811
) -> None:
    url = bad_case_page(page)
    page.locator("#id_review_note").press_sequentially(NOTE)
    asked = answer(page, accept=False)
    page.locator("#language-choice").focus()
    page.keyboard.press("ArrowUp")
    assert asked == []  # nothing asked while the operator only looks through the menu

    page.keyboard.press("Enter")

    assert [dialog.type for dialog in asked] == ["confirm"]
    assert "lost" in asked[0].message
    expect(page).to_have_url(url)
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#id_review_note")).to_have_value(NOTE)
    expect(page.locator("#language-choice")).to_have_value("en")
    # Leaving the menu now asks nothing more: the choice is the page's language again.
    page.keyboard.press("Tab")
    assert [dialog.type for dialog in asked] == ["confirm"]


def test_a_keyboard_user_with_an_unsaved_note_who_leaves_the_menu_is_asked_and_may_switch(
    page: Page,  # noqa: F811
) -> None:
    url = bad_case_page(page)
    page.locator("#id_review_note").press_sequentially(NOTE)
    asked = answer(page, accept=True)
    page.locator("#language-choice").focus()
    page.keyboard.press("ArrowUp")
    assert asked == []  # nothing asked while the operator only looks through the menu

    page.keyboard.press("Tab")

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page).to_have_url(url)
    # Asked once, by the switcher: not a second time by the browser.
    assert [dialog.type for dialog in asked] == ["confirm"]


# The browser showing the page again as it was left, from its back-forward cache: the
# menu still on the language chosen there.
SHOWN_AGAIN = """() => { document.querySelector('#language-choice').value = 'zh-hans';
  window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true})); }"""


def test_a_page_shown_again_after_a_switch_offers_its_own_language_and_tabbing_through_keeps_it(
    page: Page,  # noqa: F811
) -> None:
    a_list(page)

    page.evaluate(SHOWN_AGAIN)

    expect(page.locator("#language-choice")).to_have_value("en")
    tab_to_the_language_menu(page)
    page.keyboard.press("Tab")
    left = still_here(page)
    assert left["lang"] == "en" and not left["unloading"], left
