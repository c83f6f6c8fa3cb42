"""What the feedback widget says when something goes wrong, in a real browser on a page of
another origin: whose words (the service's or its own) for each refusal, and when a
warning goes away. Screenshots go to artifacts/screenshots/."""

import re
import time

import pytest
from playwright.sync_api import expect

from diagnosis.feedback_tokens import feedback_token_for
from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.test_admin_browser import browser, finish  # noqa: F401
from tests.test_feedback_widget_browser import chat_page, open_chat, open_widget  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("embedding_model_loaded")]

RELOAD = {
    "zh": "反馈链接无效或已过期，请刷新页面后重试。",
    "en": "This feedback link is invalid or has expired. Reload the page and try again.",
}
TOO_MANY = {
    "zh": "提交太频繁，请稍后再试。",
    "en": "Too many attempts. Please wait a moment and try again.",
}
TOO_MANY_WAIT = {
    "zh": re.compile(r"提交太频繁，请 (\d+) 秒后再试。"),
    "en": re.compile(r"Too many attempts\. Please wait (\d+) s and try again\."),
}
NOT_FOUND = {"zh": "找不到这个会话。", "en": "This session was not found."}
CHOOSE_REASON = {"zh": "请选择一个原因。", "en": "Please choose a reason."}
THANKS = {
    "zh": "感谢反馈，运维同学会复核这个回答。",
    "en": "Thank you: the operations team will review this answer.",
}
RETRY = re.compile("重试|Try again")


def another_session_s_token(settings, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    DiagnosisSessionFactory(session_id="msg-other", succeeded=True)
    return feedback_token_for(session_id="msg-other")


def a_token_from_before_the_secret_key_changed(settings, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    current = settings.SECRET_KEY
    settings.SECRET_KEY = "the-key-before-it-was-rotated-0123456789"
    token = feedback_token_for(session_id="msg-1")
    settings.SECRET_KEY = current
    return token


def an_expired_token(settings, monkeypatch) -> str:  # type: ignore[no-untyped-def]
    settings.FEEDBACK_TOKEN_MAX_AGE = 3600
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() - 3601)
    token = feedback_token_for(session_id="msg-1")
    monkeypatch.undo()
    return token


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    "refused_token",
    [another_session_s_token, a_token_from_before_the_secret_key_changed, an_expired_token],
)
def test_a_refused_token_asks_the_reader_to_reload_the_page_in_either_language(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    settings,
    monkeypatch,
    refused_token,
    lang,
) -> None:
    DiagnosisSessionFactory(session_id="msg-1", succeeded=True)
    token = refused_token(settings, monkeypatch)
    chat_page.show(service=live_server.url, session_id="msg-1", token=token, lang=lang)
    page = open_chat(browser, chat_page)

    page.locator("button[data-feedback=useful]").click()

    expect(page.get_by_role("alert")).to_have_text(RELOAD[lang])
    expect(page.get_by_role("button", name=RETRY)).to_have_count(0)
    finish(page, f"feedback-widget-refused-{refused_token.__name__}-{lang}")
    assert DiagnosisSession.objects.get(session_id="msg-1").feedback is None


def too_many_attempts(browser, live_server, chat_page, settings, lang):  # type: ignore[no-untyped-def]  # noqa: F811
    """The widget after a second attempt within the token's limit of one a minute."""
    settings.FEEDBACK_TOKEN_RATE_LIMIT = "1/min"
    DiagnosisSessionFactory(session_id="msg-2")  # still RUNNING: the first try is 409
    page = open_widget(browser, live_server, chat_page, "msg-2", lang=lang)
    useful = page.locator("button[data-feedback=useful]")

    useful.click()
    expect(page.get_by_role("alert")).not_to_have_text("")
    useful.click()
    return page


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_too_many_attempts_say_how_long_to_wait_in_the_widget_s_words_with_a_retry(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    settings,
    lang,
) -> None:
    page = too_many_attempts(browser, live_server, chat_page, settings, lang)

    alert = page.get_by_role("alert")
    expect(alert).to_have_text(TOO_MANY_WAIT[lang])
    wait = TOO_MANY_WAIT[lang].fullmatch(alert.text_content() or "")
    assert wait and 1 <= int(wait.group(1)) <= 60
    expect(page.get_by_role("button", name=RETRY)).to_be_focused()
    finish(page, f"feedback-widget-throttled-{lang}")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_too_many_attempts_without_a_readable_wait_ask_the_reader_to_wait_a_moment(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    settings,
    lang,
) -> None:
    # A service that does not expose Retry-After to other origins.
    settings.CORS_EXPOSE_HEADERS = []
    page = too_many_attempts(browser, live_server, chat_page, settings, lang)

    expect(page.get_by_role("alert")).to_have_text(TOO_MANY[lang])
    expect(page.get_by_role("button", name=RETRY)).to_be_focused()
    page.context.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_unknown_session_is_told_in_the_widget_s_words(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
) -> None:
    page = open_widget(browser, live_server, chat_page, "msg-gone", lang=lang)

    page.locator("button[data-feedback=useful]").click()

    expect(page.get_by_role("alert")).to_have_text(NOT_FOUND[lang])
    finish(page, f"feedback-widget-not-found-{lang}")


@pytest.mark.parametrize(
    ("lang", "message"),
    [
        ("zh", "sessionId 只能包含 A-Z a-z 0-9 . _ : -"),
        ("en", "The feedback was not accepted."),
    ],
)
def test_a_body_the_service_refuses_is_named_by_the_service_on_a_chinese_page(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
    message,
) -> None:
    # A page that passes a sessionId the service cannot have given out.
    page = open_widget(browser, live_server, chat_page, "msg 3", lang=lang)

    page.locator("button[data-feedback=useful]").click()

    expect(page.get_by_role("alert")).to_have_text(message)
    expect(page.get_by_role("button", name=RETRY)).to_have_count(0)
    finish(page, f"feedback-widget-bad-body-{lang}")


@pytest.mark.parametrize(
    ("lang", "open_label", "reason", "comment", "send"),
    [
        ("en", "Not useful", "Outdated", "Comment (optional)", "Send feedback"),
        ("zh", "没用", "内容过时", "补充说明（可选）", "提交反馈"),
    ],
)
def test_the_choose_a_reason_warning_goes_away_as_soon_as_a_reason_is_chosen(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
    open_label,
    reason,
    comment,
    send,
) -> None:
    DiagnosisSessionFactory(session_id="msg-4", succeeded=True)
    page = open_widget(browser, live_server, chat_page, "msg-4", lang=lang)
    alert = page.get_by_role("alert")

    page.get_by_role("button", name=open_label, exact=True).click()
    page.get_by_role("button", name=send).click()
    expect(alert).to_have_text(CHOOSE_REASON[lang])

    page.get_by_role("radio", name=reason).check()

    expect(alert).to_have_text("")
    page.get_by_label(comment).fill("The runbook was rewritten last week")
    expect(alert).to_have_text("")
    page.get_by_role("button", name=send).click()
    expect(page.get_by_role("status")).to_have_text(THANKS[lang])
    expect(alert).to_have_text("")
    finish(page, f"feedback-widget-reason-chosen-{lang}")
    assert DiagnosisSession.objects.get(session_id="msg-4").feedback == "not_useful"
