"""The feedback widget after and around a verdict, in a real browser on a page of another
origin: a comment after "useful", a recorded verdict the reader can change, a double click,
a paste cut at the limit, the reason group's error, a session still running, and where
focus is while the widget sends. Screenshots go to artifacts/screenshots/."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import Page, Request, Route, expect

from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from tests.factories import DiagnosisSessionFactory
from tests.test_admin_browser import browser, finish  # noqa: F401
from tests.test_feedback_widget_browser import chat_page, open_widget  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("embedding_model_loaded")]

TEXT = {
    "zh": {
        "useful": "有用",
        "not_useful": "没用",
        "thanks": "感谢反馈，已记录。",
        "thanks_not_useful": "感谢反馈，运维同学会复核这个回答。",
        "add_comment": "添加说明",
        "comment_box": "说明",
        "send_comment": "提交说明",
        "thanks_comment": "感谢补充，说明已记录。",
        "rated_useful": "已评价：有用",
        "rated_not_useful": "已评价：没用",
        "change": "修改",
        "reason": "内容过时",
        "send": "提交反馈",
        "reasons": "哪里不对？",
        "choose_reason": "请选择一个原因。",
        "cut": "已截断为 2000 字",
        "running": "会话仍在执行中，执行结束后才能反馈。",
        "retry": "重试",
        "sending": "正在提交…",
    },
    "en": {
        "useful": "Useful",
        "not_useful": "Not useful",
        "thanks": "Thank you: your feedback is recorded.",
        "thanks_not_useful": "Thank you: the operations team will review this answer.",
        "add_comment": "Add a comment",
        "comment_box": "Your comment",
        "send_comment": "Send comment",
        "thanks_comment": "Thank you: your comment is recorded.",
        "rated_useful": "You rated this answer useful",
        "rated_not_useful": "You rated this answer not useful",
        "change": "Change",
        "reason": "Outdated",
        "send": "Send feedback",
        "reasons": "What was wrong?",
        "choose_reason": "Please choose a reason.",
        "cut": "Cut to 2,000 characters",
        "running": "This session is still running: you can rate it once it has finished.",
        "retry": "Try again",
        "sending": "Sending…",
    },
}
LANGS = ["zh", "en"]


def button(page: Page, name: str):  # type: ignore[no-untyped-def]
    return page.get_by_role("button", name=name, exact=True)


def bodies_sent(page: Page) -> list[dict]:
    """The JSON bodies the page POSTs to the service, as they go."""
    sent: list[dict] = []

    def record(request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/api/feedback"):
            sent.append(request.post_data_json)

    page.on("request", record)
    return sent


@pytest.mark.parametrize("lang", LANGS)
def test_a_reader_who_found_the_answer_useful_can_add_a_comment_after_it_is_sent(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
) -> None:
    t = TEXT[lang]
    session_id = f"verdict-comment-{lang}"
    DiagnosisSessionFactory(session_id=session_id, succeeded=True)
    page = open_widget(browser, live_server, chat_page, session_id, lang=lang)
    sent = bodies_sent(page)

    # One click sends: the comment is offered afterwards, never in the way.
    button(page, t["useful"]).focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text(t["thanks"])
    assert DiagnosisSession.objects.get(session_id=session_id).feedback == "useful"
    assert sent == [{"sessionId": session_id, "feedback": "useful"}]

    page.keyboard.press("Tab")
    expect(button(page, t["add_comment"])).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_label(t["comment_box"], exact=True)).to_be_focused()
    page.keyboard.type("The pool size fix worked on the second node too")
    page.keyboard.press("Tab")
    expect(button(page, t["send_comment"])).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_role("status")).to_have_text(t["thanks_comment"])
    finish(page, f"feedback-widget-useful-comment-{lang}")
    comment = "The pool size fix worked on the second node too"
    assert sent[1] == {"sessionId": session_id, "feedback": "useful", "comment": comment}
    assert all("reason" not in body for body in sent)
    entry = FeedbackEntry.objects.get(session_id=session_id)
    assert (entry.feedback, entry.reason, entry.comment) == ("useful", "", comment)


@pytest.mark.parametrize("lang", LANGS)
def test_the_recorded_verdict_is_shown_and_change_lets_the_reader_give_another(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
) -> None:
    t = TEXT[lang]
    session_id = f"verdict-change-{lang}"
    DiagnosisSessionFactory(session_id=session_id, succeeded=True)
    page = open_widget(browser, live_server, chat_page, session_id, lang=lang)

    button(page, t["useful"]).click()
    expect(page.get_by_text(t["rated_useful"], exact=True)).to_be_visible()
    expect(button(page, t["useful"])).to_be_hidden()
    expect(button(page, t["not_useful"])).to_be_hidden()

    button(page, t["change"]).click()
    expect(button(page, t["useful"])).to_be_focused()
    expect(button(page, t["not_useful"])).to_be_visible()
    expect(page.get_by_text(t["rated_useful"], exact=True)).to_be_hidden()

    button(page, t["not_useful"]).click()
    page.get_by_role("radio", name=t["reason"]).check()
    button(page, t["send"]).click()

    expect(page.get_by_role("status")).to_have_text(t["thanks_not_useful"])
    expect(page.get_by_text(t["rated_not_useful"], exact=True)).to_be_visible()
    expect(button(page, t["change"])).to_be_visible()
    # The not-useful form had its comment box: no second offer.
    expect(button(page, t["add_comment"])).to_have_count(0)
    finish(page, f"feedback-widget-changed-{lang}")
    assert DiagnosisSession.objects.get(session_id=session_id).feedback == "not_useful"


def test_a_double_click_on_not_useful_leaves_the_details_open(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
) -> None:
    DiagnosisSessionFactory(session_id="verdict-dblclick", succeeded=True)
    page = open_widget(browser, live_server, chat_page, "verdict-dblclick")
    not_useful = button(page, "没用")

    not_useful.dblclick()

    expect(page.get_by_role("radio", name="根因不对")).to_be_visible()
    expect(not_useful).to_have_attribute("aria-expanded", "true")
    # A single click still closes it.
    not_useful.click()
    expect(page.get_by_role("radio", name="根因不对")).to_be_hidden()
    expect(not_useful).to_have_attribute("aria-expanded", "false")
    page.context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_a_paste_cut_at_the_comment_limit_is_said_in_the_form_s_live_region(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
) -> None:
    t = TEXT[lang]
    DiagnosisSessionFactory(session_id=f"verdict-cut-{lang}", succeeded=True)
    page = open_widget(browser, live_server, chat_page, f"verdict-cut-{lang}", lang=lang)
    button(page, t["not_useful"]).click()
    form = page.locator(".dfb form:visible")
    region = form.locator("[aria-live=polite]")
    # There before anything is said, or a screen reader may not read its change.
    expect(region).to_have_count(1)
    expect(region).to_have_text("")

    form.locator("textarea").first.focus()
    page.keyboard.insert_text("字" * 2100)

    expect(region).to_have_text(t["cut"])
    assert form.locator("textarea").first.input_value() == "字" * 2000
    finish(page, f"feedback-widget-cut-{lang}")


@pytest.mark.parametrize("lang", LANGS)
def test_sending_without_a_reason_marks_the_reason_group_invalid_until_one_is_chosen(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
) -> None:
    t = TEXT[lang]
    DiagnosisSessionFactory(session_id=f"verdict-invalid-{lang}", succeeded=True)
    page = open_widget(browser, live_server, chat_page, f"verdict-invalid-{lang}", lang=lang)
    button(page, t["not_useful"]).click()
    group = page.get_by_role("group", name=t["reasons"])
    any_value = re.compile(".*")

    button(page, t["send"]).click()

    expect(group).to_have_attribute("aria-invalid", "true")
    expect(group).to_have_accessible_description(t["choose_reason"])

    page.get_by_role("radio", name=t["reason"]).check()

    expect(group).not_to_have_attribute("aria-invalid", any_value)
    expect(group).not_to_have_attribute("aria-describedby", any_value)
    page.context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_a_session_still_running_is_told_precisely_and_the_retry_sends_once_it_finished(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
) -> None:
    t = TEXT[lang]
    session_id = f"verdict-running-{lang}"
    DiagnosisSessionFactory(session_id=session_id)  # still RUNNING: 409
    page = open_widget(browser, live_server, chat_page, session_id, lang=lang)

    button(page, t["useful"]).click()

    expect(page.get_by_role("alert")).to_have_text(t["running"])
    expect(button(page, t["retry"])).to_be_focused()

    DiagnosisSession.objects.filter(session_id=session_id).update(
        status="SUCCESS", answer="扩容连接池", finished_at=timezone.now()
    )
    page.keyboard.press("Enter")

    expect(page.get_by_role("status")).to_have_text(t["thanks"])
    finish(page, f"feedback-widget-running-then-finished-{lang}")
    assert DiagnosisSession.objects.get(session_id=session_id).feedback == "useful"


@pytest.mark.parametrize("verdict", ["useful", "not_useful"])
def test_focus_stays_in_the_widget_while_the_feedback_is_on_its_way(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    verdict,
) -> None:
    t = TEXT["zh"]
    session_id = f"verdict-focus-{verdict}"
    DiagnosisSessionFactory(session_id=session_id, succeeded=True)
    page = open_widget(browser, live_server, chat_page, session_id)
    held: list[Route] = []
    page.route(f"{live_server.url}/api/feedback", lambda route: held.append(route))

    if verdict == "useful":
        button(page, t["useful"]).focus()
    else:
        button(page, t["not_useful"]).click()
        page.get_by_role("radio", name=t["reason"]).check()
        button(page, t["send"]).focus()
    page.keyboard.press("Enter")

    status = page.get_by_role("status")
    expect(status).to_have_text(t["sending"])
    expect(status).to_be_focused()
    assert page.evaluate("document.activeElement !== document.body")

    for _ in range(100):  # until the held request reaches its handler
        if held:
            break
        page.wait_for_timeout(50)
    held[0].continue_()
    expect(status).to_have_text(t[f"thanks{'' if verdict == 'useful' else '_not_useful'}"])
    assert DiagnosisSession.objects.get(session_id=session_id).feedback == verdict
    page.context.close()


@pytest.mark.parametrize("send", ["useful", "not_useful", "comment"])
def test_a_double_click_on_a_send_button_posts_once(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    send,
) -> None:
    t = TEXT["zh"]
    session_id = f"verdict-once-{send}"
    DiagnosisSessionFactory(session_id=session_id, succeeded=True)
    page = open_widget(browser, live_server, chat_page, session_id)
    sent = bodies_sent(page)
    if send == "not_useful":
        button(page, t["not_useful"]).click()
        page.get_by_role("radio", name=t["reason"]).check()
    elif send == "comment":
        button(page, t["useful"]).click()
        expect(page.get_by_role("status")).to_have_text(t["thanks"])
        button(page, t["add_comment"]).click()
        page.get_by_label(t["comment_box"], exact=True).fill("有用，已按步骤恢复")

    name = {"useful": t["useful"], "not_useful": t["send"], "comment": t["send_comment"]}[send]
    button(page, name).dblclick()

    thanks = {"useful": "thanks", "not_useful": "thanks_not_useful", "comment": "thanks_comment"}
    expect(page.get_by_role("status")).to_have_text(t[thanks[send]])
    assert len(sent) == (2 if send == "comment" else 1)
    page.context.close()


def test_escape_closes_either_form_and_returns_focus_to_the_button_that_opened_it(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
) -> None:
    t = TEXT["zh"]
    DiagnosisSessionFactory(session_id="verdict-escape", succeeded=True)
    page = open_widget(browser, live_server, chat_page, "verdict-escape")

    button(page, t["not_useful"]).focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(button(page, t["not_useful"])).to_be_focused()
    expect(page.get_by_role("radio", name=t["reason"])).to_be_hidden()

    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text(t["thanks"])
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.get_by_label(t["comment_box"], exact=True)).to_be_focused()
    page.keyboard.press("Escape")
    expect(button(page, t["add_comment"])).to_be_focused()
    expect(button(page, t["add_comment"])).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_label(t["comment_box"], exact=True)).to_be_hidden()
    page.context.close()
