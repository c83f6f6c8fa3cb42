"""The feedback widget in a real browser: a chat page on another origin runs the README's
three lines, a reader rates an answer with the keyboard, and the bad-case review in the
admin shows what they said. Screenshots go to artifacts/screenshots/."""

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from caselibrary.models import CaseLibrary
from diagnosis.feedback_tokens import feedback_token_for
from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from tests.factories import DiagnosisSessionFactory
from tests.processes import ROOT
from tests.test_admin_browser import browser, finish, log_in, operator  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("embedding_model_loaded")]


def readme_widget_lines() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- widget -->\n```html\n(.*?)```\n<!-- /widget -->", readme, re.S)
    assert block, "README.md lost its widget lines"
    lines = block.group(1)
    assert len(lines.strip().splitlines()) == 3
    return lines


class ChatPage:
    """A page of another origin (another host and port than the service's)."""

    def __init__(self) -> None:
        self.html = ""
        self.charset = "utf-8"
        self.headers: dict[str, str] = {}  # sent with the page, such as its CSP
        self.scripts: dict[str, str] = {}  # path: the page's own script files
        page = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path in page.scripts:
                    body = page.scripts[self.path].encode("utf-8")
                    content_type = "text/javascript; charset=utf-8"
                else:
                    body = page.html.encode(page.charset)
                    content_type = f"text/html; charset={page.charset}"
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in page.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def show(
        self,
        *,
        service: str,
        session_id: str,
        token: str,
        lang: str = "zh",
        timeout: int = 0,
        more_options: str = "",
    ) -> None:
        options = f'lang: "{lang}"' + (f", timeout: {timeout}" if timeout else "")
        options += f", {more_options}" if more_options else ""
        lines = (
            readme_widget_lines()
            .replace("https://diagnosis.example.com", service)
            .replace('"walk-1"', f'"{session_id}"')
            .replace("FEEDBACK_TOKEN", token)
            .replace('lang: "zh"', options)
        )
        self.html = (
            f'<!doctype html><html><head><meta charset="{self.charset}"><title>Chat</title></head>'
            f"<body><h1>order-service 504</h1><p>根因：连接池耗尽。</p>{lines}</body></html>"
        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat_page(live_server, settings) -> Iterator[ChatPage]:  # type: ignore[no-untyped-def]
    page = ChatPage()
    assert page.origin != live_server.url
    settings.CORS_ALLOWED_ORIGINS = [page.origin]
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    cache.clear()
    yield page
    page.close()


def open_widget(browser, live_server, chat_page: ChatPage, session_id: str, **options) -> Page:  # type: ignore[no-untyped-def]  # noqa: F811
    """The chat page showing `session_id`'s answer with the widget and its token."""
    chat_page.show(
        service=live_server.url,
        session_id=session_id,
        token=feedback_token_for(session_id=session_id),
        **options,
    )
    return open_chat(browser, chat_page)


def open_chat(browser, chat_page: ChatPage) -> Page:  # type: ignore[no-untyped-def]  # noqa: F811
    context = browser.new_context(locale="zh-CN", viewport={"width": 900, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(chat_page.origin + "/")
    return page


def test_a_reader_on_another_origin_rates_not_useful_and_the_review_shows_it(
    browser,  # noqa: F811
    live_server,
    chat_page,
    operator,  # noqa: F811
) -> None:
    DiagnosisSessionFactory(session_id="widget-1", succeeded=True, query="order-service 504")
    page = open_widget(browser, live_server, chat_page, "widget-1")

    # Keyboard only: open the details, choose the first reason, write, send.
    page.get_by_role("button", name="没用").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("radio", name="根因不对")).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    expect(page.get_by_label("补充说明（可选）")).to_be_focused()
    page.keyboard.type("连接池没满，是 DNS 解析超时")
    page.keyboard.press("Tab")
    expect(page.get_by_label("正确的根因或处理办法（可选）")).to_be_focused()
    page.keyboard.type("CoreDNS 副本不足导致解析超时，扩容 CoreDNS 到 4 副本")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="提交反馈")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_role("status")).to_have_text("感谢反馈，运维同学会复核这个回答。")
    expect(page.get_by_role("status")).to_be_focused()
    finish(page, "feedback-widget-sent")

    session = DiagnosisSession.objects.get(session_id="widget-1")
    assert session.feedback == "not_useful"
    entry = FeedbackEntry.objects.get()
    assert (entry.reason, entry.channel) == ("wrong_root_cause", "token")

    admin = log_in(browser, live_server, operator)
    admin.goto(f"{live_server.url}/admin/feedback/badcase/{session.pk}/change/")
    history = admin.locator("table.feedback-history")
    expect(history.locator("td.feedback-reason")).to_have_text("Wrong root cause")
    expect(history.locator("td.feedback-comment")).to_have_text("连接池没满，是 DNS 解析超时")
    expect(history.locator("td.feedback-correction")).to_have_text(
        "CoreDNS 副本不足导致解析超时，扩容 CoreDNS 到 4 副本"
    )
    finish(admin, "feedback-widget-review")


@pytest.mark.parametrize(
    ("lang", "message"),
    [
        ("zh", "反馈链接无效或已过期，请刷新页面后重试。"),
        ("en", "This feedback link is invalid or has expired. Reload the page and try again."),
    ],
)
def test_a_forged_token_fails_in_the_widget_with_a_clear_message(
    browser,  # noqa: F811
    live_server,
    chat_page,
    lang,
    message,
) -> None:
    DiagnosisSessionFactory(session_id="widget-2", succeeded=True)
    forged = feedback_token_for(session_id="widget-2")[:-4] + "AAAA"
    chat_page.show(service=live_server.url, session_id="widget-2", token=forged, lang=lang)
    page = open_chat(browser, chat_page)

    page.locator("button[data-feedback=useful]").click()

    expect(page.get_by_role("alert")).to_have_text(message)
    finish(page, f"feedback-widget-forged-{lang}")
    assert DiagnosisSession.objects.get(session_id="widget-2").feedback is None


def test_the_widget_says_so_when_the_page_origin_is_not_allowed(
    browser,  # noqa: F811
    live_server,
    chat_page,
    settings,
) -> None:
    settings.CORS_ALLOWED_ORIGINS = []
    DiagnosisSessionFactory(session_id="widget-3", succeeded=True)
    token = feedback_token_for(session_id="widget-3")
    chat_page.show(service=live_server.url, session_id="widget-3", token=token, lang="en")
    page = open_chat(browser, chat_page)

    page.get_by_role("button", name="Useful", exact=True).click()

    expect(page.get_by_role("alert")).to_contain_text("Could not reach the feedback service.")
    finish(page, "feedback-widget-origin-refused")
    assert DiagnosisSession.objects.get(session_id="widget-3").feedback is None


def test_the_widget_reads_its_chinese_right_on_a_page_that_is_not_utf8(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    DiagnosisSessionFactory(session_id="widget-gbk", succeeded=True, query="order-service 504")
    chat_page.charset = "gbk"  # many older intranet pages are GBK
    page = open_widget(browser, live_server, chat_page, "widget-gbk")

    expect(page.get_by_role("button", name="有用")).to_be_visible()
    expect(page.get_by_role("button", name="没用")).to_be_visible()
    page.context.close()


def test_the_demo_page_in_docs_mounts_the_widget_and_rates_useful(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    DiagnosisSessionFactory(session_id="demo-1", succeeded=True)
    chat_page.html = (ROOT / "docs" / "feedback-widget.html").read_text(encoding="utf-8")
    token = feedback_token_for(session_id="demo-1")
    page = open_chat(browser, chat_page)
    page.goto(f"{chat_page.origin}/?service={live_server.url}&session=demo-1&token={token}&lang=en")

    page.get_by_role("button", name="Useful", exact=True).click()

    expect(page.get_by_role("status")).to_have_text("Thank you: your feedback is recorded.")
    finish(page, "feedback-widget-demo")
    assert DiagnosisSession.objects.get(session_id="demo-1").feedback == "useful"


def test_on_success_hands_the_page_the_service_s_reply_with_the_case_id(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    DiagnosisSessionFactory(session_id="widget-case", succeeded=True)
    page = open_widget(
        browser,
        live_server,
        chat_page,
        "widget-case",
        more_options="onSuccess: function (feedback, reply) { window.rated = [feedback, reply]; }",
    )

    page.get_by_role("button", name="有用").click()

    page.wait_for_function("window.rated !== undefined")
    feedback, reply = page.evaluate("window.rated")
    case = CaseLibrary.objects.get(diagnosis_id="widget-case")
    assert feedback == "useful"
    assert reply == {"success": True, "message": "反馈已记录", "caseId": case.case_id}
    page.context.close()


def test_after_a_refused_submission_focus_is_on_the_message_not_lost_on_the_page(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    # No answer: 409, and no retry to bring focus to (a session still running has one).
    DiagnosisSessionFactory(session_id="widget-4", status="FAILED", answer=None)
    page = open_widget(browser, live_server, chat_page, "widget-4")

    page.get_by_role("button", name="有用").focus()
    page.keyboard.press("Enter")

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("这个会话没有答案，不能标记为有用。")
    assert page.evaluate("document.activeElement !== document.body")
    expect(alert).to_be_focused()
    finish(page, "feedback-widget-refused-focus")
    assert DiagnosisSession.objects.get(session_id="widget-4").feedback is None


@pytest.mark.parametrize(
    ("lang", "message"),
    [
        ("zh", "这个会话没有答案，不能标记为有用。"),
        ("en", "This session has no answer, so it cannot be rated useful."),
    ],
)
def test_useful_on_a_failed_session_says_why_in_the_reader_s_words_and_offers_no_retry(
    browser,  # noqa: F811
    live_server,
    chat_page,
    lang,
    message,
) -> None:
    DiagnosisSessionFactory(session_id="widget-5", status="FAILED", answer=None)
    page = open_widget(browser, live_server, chat_page, "widget-5", lang=lang)

    page.locator("button[data-feedback=useful]").click()

    expect(page.get_by_role("alert")).to_have_text(message)
    expect(page.get_by_role("button", name=re.compile("重试|Try again"))).to_have_count(0)
    finish(page, f"feedback-widget-no-answer-{lang}")


def test_choosing_useful_after_opening_not_useful_closes_the_details_for_screen_readers_too(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    DiagnosisSessionFactory(session_id="widget-6", succeeded=True)
    page = open_widget(browser, live_server, chat_page, "widget-6")
    not_useful = page.locator("button[data-feedback=not_useful]")

    not_useful.click()
    expect(not_useful).to_have_attribute("aria-expanded", "true")
    page.get_by_role("button", name="有用").click()

    expect(page.get_by_role("status")).to_have_text("感谢反馈，已记录。")
    expect(page.get_by_role("radio", name="根因不对")).to_be_hidden()
    expect(not_useful).to_have_attribute("aria-expanded", "false")
    finish(page, "feedback-widget-useful-after-not-useful")


def test_the_counters_describe_their_box_and_the_message_regions_keep_their_roles(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    DiagnosisSessionFactory(session_id="widget-7")  # still RUNNING: 409
    page = open_widget(browser, live_server, chat_page, "widget-7")

    page.get_by_role("button", name="没用").click()
    comment = page.get_by_label("补充说明（可选）")
    correction = page.get_by_label("正确的根因或处理办法（可选）")
    expect(comment).to_have_accessible_description("还可输入 2000 字")
    expect(correction).to_have_accessible_description("还可输入 10000 字")
    comment.fill("DNS 超时")
    expect(comment).to_have_accessible_description("还可输入 1994 字")
    # Read with the box, not after every keystroke.
    assert page.locator(".dfb [aria-live]:has(.dfb-count), .dfb-count[aria-live]").count() == 0
    # Both message regions are there before anything is said: a screen reader reads a
    # region's changes only if it knew the region already.
    expect(page.get_by_role("status")).to_have_count(1)
    expect(page.get_by_role("alert")).to_have_count(1)

    page.get_by_role("radio", name="根因不对").check()
    page.get_by_role("button", name="提交反馈").click()

    expect(page.get_by_role("alert")).to_have_text("会话仍在执行中，执行结束后才能反馈。")
    expect(page.get_by_role("status")).to_have_count(1)
    expect(page.get_by_role("status")).to_have_text("")
    finish(page, "feedback-widget-regions")


def test_the_comment_box_counts_characters_as_the_service_does_emoji_included(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    DiagnosisSessionFactory(session_id="widget-emoji", succeeded=True, answer="a")
    page = open_widget(browser, live_server, chat_page, "widget-emoji")
    page.get_by_role("button", name="没用").click()
    comment = page.get_by_label("补充说明（可选）")

    comment.fill("🔥" * 1500)
    expect(comment).to_have_accessible_description("还可输入 500 字")
    comment.fill("🔥" * 2100)
    expect(comment).to_have_accessible_description("还可输入 0 字")
    page.get_by_role("radio", name="根因不对").check()
    page.get_by_role("button", name="提交反馈").click()

    expect(page.get_by_role("status")).to_have_text("感谢反馈，运维同学会复核这个回答。")
    assert FeedbackEntry.objects.get(session_id="widget-emoji").comment == "🔥" * 2000


def test_a_service_that_never_answers_ends_in_the_network_message_and_retry_works(
    browser,  # noqa: F811
    live_server,
    chat_page,
) -> None:
    DiagnosisSessionFactory(session_id="widget-8", succeeded=True)
    page = open_widget(browser, live_server, chat_page, "widget-8", timeout=1000)
    # The connection is taken and never answered.
    page.route(f"{live_server.url}/api/feedback", lambda route: None)

    page.get_by_role("button", name="有用").click()

    expect(page.get_by_role("status")).to_have_text("正在提交…")
    expect(page.get_by_role("alert")).to_have_text("无法连接反馈服务，请检查网络后重试。")
    retry = page.get_by_role("button", name="重试")
    expect(retry).to_be_focused()
    assert DiagnosisSession.objects.get(session_id="widget-8").feedback is None

    page.unroute(f"{live_server.url}/api/feedback")
    page.keyboard.press("Enter")

    expect(page.get_by_role("status")).to_have_text("感谢反馈，已记录。")
    finish(page, "feedback-widget-timeout")
    assert DiagnosisSession.objects.get(session_id="widget-8").feedback == "useful"
