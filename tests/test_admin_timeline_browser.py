"""The session timeline at 1366 pixels in Chromium: a model call names its model and
tokens on its collapsed row, and an opened row lists the span's attributes, read then."""

import json

import pytest
from django.test import Client
from playwright.sync_api import expect

from diagnosis.models import DiagnosisSession
from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.test_admin_browser import (  # noqa: F401
    PASSWORD,
    SCREENSHOTS,
    browser,
    finish,
    log_in,
)

pytestmark = pytest.mark.browser

LIST = "/admin/diagnosis/diagnosissession/"
# The page's width against the window's, and the attribute tables' against their rows'.
WIDTHS = """() => ({
  window: window.innerWidth,
  page: document.documentElement.scrollWidth,
  modelCallsCut: [...document.querySelectorAll('#session-timeline .model-call')].filter(
    m => m.scrollWidth > m.clientWidth).length,
  tables: [...document.querySelectorAll('#session-timeline table.attributes')].map(
    t => ({table: t.getBoundingClientRect().right,
           row: t.closest('details').getBoundingClientRect().right})),
})"""


def an_agent_run(key: str, settings) -> None:  # type: ignore[no-untyped-def]
    settings.OTLP_MAX_ATTRIBUTE_CHARS = 2000
    trace_id, root = new_trace_id(), new_span_id()
    history = [
        {
            "role": "user",
            "parts": [{"type": "text", "content": "order-service 大量 504，怎么排查？"}],
        },
        {"role": "assistant", "parts": [{"type": "text", "content": "先查网关日志。" * 200}]},
    ]
    post(
        Client(),
        export(
            span(
                "invoke_agent sre-agent",
                trace_id=trace_id,
                span_id=root,
                duration_ms=900,
                attributes={"session.id": "browser-attributes", "input.value": "504?"},
            ),
            span(
                "chat",
                trace_id=trace_id,
                parent=root,
                duration_ms=400,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.system": "openai",
                    "gen_ai.request.model": "gpt-4o-2024-08-06",
                    "gen_ai.usage.input_tokens": 12834,
                    "gen_ai.usage.output_tokens": 412,
                    "gen_ai.input.messages": json.dumps(history, ensure_ascii=False),
                },
            ),
            span(
                "execute_tool search_docs",
                trace_id=trace_id,
                parent=root,
                duration_ms=200,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search_docs",
                    "gen_ai.tool.call.arguments": '{"q": "order-service 504"}',
                    "gen_ai.tool.call.result": "PG-504 runbook: payment-gateway pool. " * 80,
                    "diagnosis.tool.kind": "retrieval",
                    "diagnosis.hit_count": "lots",
                    "url.full": "https://kb.example.com/search?" + "q=order-service-504&" * 12,
                },
            ),
        ),
        key=key,
    )


def test_an_opened_row_lists_its_attributes_and_fits_1366_pixels(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
    settings,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    an_agent_run(make_client("agent").raw_key, settings)
    session = DiagnosisSession.objects.get(session_id="browser-attributes")
    page = log_in(browser, live_server, admin_user, width=1366, english=True)
    page.goto(f"{page.base_url}{LIST}{session.pk}/change/")

    timeline = page.locator("#session-timeline")
    model_row = timeline.locator("details.role-model")
    expect(model_row.locator("summary .model-call")).to_have_text(
        "gpt-4o-2024-08-06 · 12834 in · 412 out"
    )
    expect(model_row.locator("table.attributes")).to_have_count(0)
    for row in ("Model call · chat", "search_docs"):
        timeline.locator("summary", has_text=row).click()
    expect(model_row.locator("table.attributes")).to_be_visible()
    tool_row = timeline.locator("details", has_text="search_docs")
    expect(tool_row.locator("table.attributes")).to_contain_text("diagnosis.hit_count")
    expect(tool_row.locator("table.attributes")).to_contain_text("diagnosis.truncated")
    timeline.scroll_into_view_if_needed()
    widths = page.evaluate(WIDTHS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    timeline.screenshot(path=str(SCREENSHOTS / "timeline_rows_at_1366.png"))
    finish(page, "timeline_attributes_at_1366")

    assert widths["page"] <= widths["window"] == 1366, widths
    assert all(t["table"] <= t["row"] + 1 for t in widths["tables"]), widths
    assert widths["modelCallsCut"] == 0, widths


@pytest.fixture
def admin_user(transactional_db):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    return User.objects.create_superuser("ops.admin", password=PASSWORD)


def test_the_list_marks_a_placeholder_and_still_fits_1366_pixels(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
    settings,
) -> None:
    from tests.factories import DiagnosisSessionFactory
    from tests.test_admin_session_placeholders import spans_naming_no_session

    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    placeholder = spans_naming_no_session(make_client("agent").raw_key)
    DiagnosisSessionFactory(session_id="started-over-rest")
    DiagnosisSessionFactory(session_id="scored", succeeded=True, evidence_score=70)
    page = log_in(browser, live_server, admin_user, width=1366, english=True)

    page.goto(f"{page.base_url}{LIST}")
    row = page.locator("#result_list tbody tr", has_text=placeholder)
    expect(row.locator(".score-waiting")).to_have_text("waiting for the session id")
    expect(page.locator("#result_list .score-waiting")).to_have_count(1)
    widths = page.evaluate(WIDTHS)
    finish(page, "sessions_with_a_placeholder_at_1366")

    assert widths["page"] <= widths["window"] == 1366, widths
