"""The session timeline in the admin: spans or tool invocations on one time scale."""

import os
from collections.abc import Iterator

import pytest
from django.test import Client
from playwright.sync_api import Browser, expect, sync_playwright

from diagnosis.models import DiagnosisSession
from tests.conftest import CHROMIUM
from tests.factories import DiagnosisSessionFactory
from tests.otlp import export, new_span_id, new_trace_id, post, span

pytestmark = pytest.mark.django_db

LIST = "/admin/diagnosis/diagnosissession/"


def an_otlp_session(key: str) -> None:
    trace_id, root = new_trace_id(), new_span_id()
    post(
        Client(),
        export(
            span(
                "invoke_agent agent",
                trace_id=trace_id,
                span_id=root,
                duration_ms=100,
                attributes={"session.id": "timeline-1", "input.value": "为什么 504？"},
            ),
            span(
                "execute_tool search_docs",
                trace_id=trace_id,
                parent=root,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search_docs",
                    "gen_ai.tool.call.arguments": '{"q": "payment 504"}',
                    "gen_ai.tool.call.result": '["PG-504 runbook"]',
                },
            ),
            span(
                "execute_tool restart",
                trace_id=trace_id,
                parent=root,
                error="permission denied",
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "restart"},
            ),
        ),
        key=key,
    )


def test_an_otlp_session_page_shows_its_spans_with_the_failed_one_in_red(admin_client, make_client):
    an_otlp_session(make_client("agent").raw_key)

    session = DiagnosisSession.objects.get(session_id="timeline-1")
    page = admin_client.get(f"{LIST}{session.pk}/change/").content.decode()

    assert 'id="session-timeline"' in page
    assert page.count("<details") == 3
    assert "search_docs" in page and "payment 504" in page
    assert 'class="role-tool error"' in page
    assert "permission denied" in page


def test_a_rest_session_page_shows_its_tool_invocations(admin_client):
    session = DiagnosisSessionFactory(status="SUCCESS", answer="a")
    session.tool_invocations.create(
        tool_name="QueryInternalDocsTools",
        status="SUCCESS",
        match_level="L0",
        hit_count=2,
        query="order-service 504",
        duration_ms=120,
    )

    page = admin_client.get(f"{LIST}{session.pk}/change/")

    text = page.content.decode()
    assert text.count("<details") == 1
    assert "QueryInternalDocsTools" in text and "order-service 504" in text


def test_a_case_library_search_row_links_the_cases_it_found(admin_client):
    from caselibrary.models import CaseSearch
    from tests.factories import CaseLibraryFactory

    case = CaseLibraryFactory()
    session = DiagnosisSessionFactory(status="SUCCESS", answer="a")
    session.tool_invocations.create(
        invocation_id="case-search-1",
        tool_name="CaseLibrarySearch",
        status="SUCCESS",
        match_level="L1",
        hit_count=1,
        query="payment 504",
    )
    CaseSearch.objects.create(
        session=session,
        invocation_id="case-search-1",
        query="payment 504",
        query_key="k",
        match_level="L1",
        hit_count=1,
        case_ids=[str(case.case_id)],
    )

    page = admin_client.get(f"{LIST}{session.pk}/change/").content.decode()

    timeline = page[page.index('id="session-timeline"') :]
    assert f"/admin/caselibrary/caselibrary/{case.case_id}/change/" in timeline


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_timeline_shows_and_expands_in_a_browser(browser, live_server, make_client):
    from django.contrib.auth.models import User

    an_otlp_session(make_client("agent").raw_key)
    User.objects.create_superuser("ops.admin", password="pw-for-tests-only")
    page = browser.new_page()
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "ops.admin")
    page.fill("#id_password", "pw-for-tests-only")
    page.click("input[type=submit]")
    session = DiagnosisSession.objects.get(session_id="timeline-1")
    page.goto(f"{live_server.url}{LIST}{session.pk}/change/")

    timeline = page.locator("#session-timeline")
    expect(timeline.locator("details")).to_have_count(3)
    expect(page.get_by_text("时间线").first).to_be_visible()
    arguments = timeline.locator("details", has_text="search_docs").locator("pre.arguments")
    expect(arguments).to_be_hidden()
    timeline.locator("summary", has_text="search_docs").click()
    expect(arguments).to_be_visible()
    expect(arguments).to_contain_text("payment 504")
    page.close()
