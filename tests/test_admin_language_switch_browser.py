"""Switching the console's language reloads the page it was switched on: an operator who
has typed into a form and not saved it is asked first, and a page with nothing unsaved
switches at once and stays where it was."""

import re

import pytest
from playwright.sync_api import Dialog, Page, expect

from feedback.models import BadCaseReview
from tests.factories import DiagnosisSessionFactory
from tests.test_admin_browser import browser, operator, page  # noqa: F401

pytestmark = pytest.mark.browser

# A note an operator has begun typing.
NOTE = "检索命中了 runbook"


def bad_case_page(tab: Page) -> str:
    session = DiagnosisSessionFactory(
        session_id="bad-504",
        not_useful=True,
        evidence_score=65,
        query="order-service returns 504 since 14:05, how do I dig in?",
    )
    url = f"{tab.base_url}/admin/feedback/badcase/{session.pk}/change/"
    tab.goto(url)
    return url


def answer(tab: Page, *, accept: bool) -> list[Dialog]:
    """Answers every question the page asks, and keeps them to look at."""
    asked: list[Dialog] = []

    def reply(dialog: Dialog) -> None:
        asked.append(dialog)
        dialog.accept() if accept else dialog.dismiss()

    tab.on("dialog", reply)
    return asked


def test_an_operator_with_an_unsaved_note_who_picks_another_language_is_asked_and_may_stay(
    page: Page,  # noqa: F811
) -> None:
    url = bad_case_page(page)
    page.locator("#id_review_note").press_sequentially(NOTE)
    asked = answer(page, accept=False)

    page.select_option("#language-choice", "zh-hans")

    assert [dialog.type for dialog in asked] == ["confirm"]
    assert "lost" in asked[0].message
    expect(page).to_have_url(url)
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#id_review_note")).to_have_value(NOTE)
    # The choice goes back to the language the page speaks.
    expect(page.locator("#language-choice")).to_have_value("en")


def test_an_operator_who_switches_anyway_lands_on_the_same_page_in_the_new_language(
    page: Page,  # noqa: F811
) -> None:
    url = bad_case_page(page)
    page.locator("#id_review_note").press_sequentially(NOTE)
    asked = answer(page, accept=True)

    page.select_option("#language-choice", "zh-hans")

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page).to_have_url(url)
    # Asked once, by the switcher: not a second time by the browser.
    assert [dialog.type for dialog in asked] == ["confirm"]
    assert not BadCaseReview.objects.filter(note__startswith=NOTE).exists()


def test_a_page_with_nothing_unsaved_switches_at_once_and_stays_where_it_was(
    page: Page,  # noqa: F811
) -> None:
    DiagnosisSessionFactory(
        session_id="bad-504", not_useful=True, query="order-service returns 504 since 14:05"
    )
    page.goto(f"{page.base_url}/admin/feedback/badcase/?q=504")
    # A row selected for an action is nothing unsaved.
    page.locator("#result_list tbody input[name=_selected_action]").first.check()
    asked = answer(page, accept=False)

    page.select_option("#language-choice", "zh-hans")

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page).to_have_url(re.compile(r"/admin/feedback/badcase/\?q=504$"))
    assert asked == []


def test_a_typed_and_deleted_note_is_no_change_to_ask_about(page: Page) -> None:  # noqa: F811
    url = bad_case_page(page)
    note = page.locator("#id_review_note")
    note.press_sequentially("abc")
    for _ in range(3):
        note.press("Backspace")
    asked = answer(page, accept=False)

    page.select_option("#language-choice", "zh-hans")

    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page).to_have_url(url)
    assert asked == []


def test_leaving_a_page_with_an_unsaved_note_by_a_link_asks_the_browsers_question(
    page: Page,  # noqa: F811
) -> None:
    url = bad_case_page(page)
    page.locator("#id_review_note").press_sequentially(NOTE)
    asked = answer(page, accept=False)

    page.locator("div.breadcrumbs a").first.click()

    expect(page.locator("#id_review_note")).to_have_value(NOTE)
    assert [dialog.type for dialog in asked] == ["beforeunload"]
    assert page.url == url


def test_saving_a_changed_form_asks_nothing(page: Page) -> None:  # noqa: F811
    bad_case_page(page)
    page.locator("#id_review_note").press_sequentially(NOTE)
    asked = answer(page, accept=False)

    page.click("input[name=_save]")

    expect(page.locator(".messagelist .success")).to_be_visible()
    assert asked == []
    assert BadCaseReview.objects.get(session__session_id="bad-504").note == NOTE
