"""What a reader with low vision, a phone, forced colours or a screen reader meets in the
console and the feedback widget, in Chromium: text against its own background at 4.5:1
(WCAG AA) in light and dark themes, a session timeline and a merge that fit 390 pixels,
a failed span said in words, bars that stay in forced colours, fields named after their
column, descriptions that point at something, links in running text underlined."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import Page, expect

from caselibrary.models import CaseReuse
from diagnosis.models import DiagnosisSession
from feedback.models import ReviewState
from tests.factories import (
    BadCaseReviewFactory,
    CaseLibraryFactory,
    DiagnosisSessionFactory,
)
from tests.near_duplicates import flag_near_duplicates
from tests.otlp import export, new_span_id, new_trace_id, post, span
from tests.processes import ROOT
from tests.test_admin_browser import PASSWORD, browser, finish, log_in  # noqa: F401
from tests.test_feedback_widget_browser import chat_page, open_chat  # noqa: F401

pytestmark = pytest.mark.browser

AA = 4.5
SESSIONS = "/admin/diagnosis/diagnosissession/"

# The contrast ratio of an element's text against the first background behind it that is
# not transparent (its own, or an ancestor's; white if none), from the computed colours.
CONTRAST = """element => {
  const rgb = colour => colour.match(/[\\d.]+/g).map(Number);
  const luminance = ([r, g, b]) => {
    const linear = v => (v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  };
  let background = [255, 255, 255];
  for (let node = element; node; node = node.parentElement) {
    const colour = rgb(getComputedStyle(node).backgroundColor);
    if (colour.length < 4 || colour[3] > 0) { background = colour; break; }
  }
  const [light, dark] = [luminance(rgb(getComputedStyle(element).color)),
                         luminance(background)].sort((a, b) => b - a);
  return Math.round((light + 0.05) / (dark + 0.05) * 100) / 100;
}"""


def contrasts(page: Page, selector: str) -> dict[str, float]:
    """Each element's text (its first 40 characters) and its contrast ratio."""
    found = page.locator(selector)
    expect(found.first).to_be_visible()
    return {
        element.inner_text()[:40] or selector: element.evaluate(CONTRAST) for element in found.all()
    }


def poor(ratios: dict[str, float]) -> dict[str, float]:
    return {text: ratio for text, ratio in ratios.items() if ratio < AA}


@pytest.fixture
def admin_user(transactional_db, settings) -> User:  # type: ignore[no-untyped-def]
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    return User.objects.create_superuser("ops.admin", password=PASSWORD)


def dark(page: Page, how: str) -> None:
    """The console in its dark theme: the system's (Django's theme follows it by default)
    or the one chosen with the theme button (kept in localStorage)."""
    if how == "system":
        page.emulate_media(color_scheme="dark")
    else:
        page.evaluate("localStorage.setItem('theme', 'dark')")
    page.reload()


def a_run_with_a_failed_call(make_client) -> DiagnosisSession:  # type: ignore[no-untyped-def]
    trace_id, root = new_trace_id(), new_span_id()
    post(
        Client(),
        export(
            span(
                "invoke_agent sre-agent",
                trace_id=trace_id,
                span_id=root,
                duration_ms=900,
                attributes={"session.id": "browser-failed-call", "input.value": "504?"},
            ),
            span(
                "execute_tool search_docs",
                trace_id=trace_id,
                parent=root,
                duration_ms=200,
                error="connection refused",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search_docs",
                    "gen_ai.tool.call.arguments": '{"q": "order-service 504"}',
                    "diagnosis.tool.kind": "retrieval",
                    "diagnosis.hit_count": "lots",
                },
            ),
        ),
        key=make_client("agent").raw_key,
    )
    return DiagnosisSession.objects.get(session_id="browser-failed-call")


def open_timeline(browser, live_server, admin_user, make_client, *, width: int = 1366) -> Page:  # type: ignore[no-untyped-def]  # noqa: F811
    session = a_run_with_a_failed_call(make_client)
    page = log_in(browser, live_server, admin_user, width=width, english=True)
    page.goto(f"{page.base_url}{SESSIONS}{session.pk}/change/")
    expect(page.locator("#session-timeline details")).to_have_count(2)
    return page


# --- The feedback widget ----------------------------------------------------------------


def test_the_widget_keeps_its_text_readable_on_a_dark_page(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
) -> None:
    from diagnosis.feedback_tokens import feedback_token_for

    DiagnosisSessionFactory(session_id="demo-dark", succeeded=True)
    demo = (ROOT / "docs" / "feedback-widget.html").read_text(encoding="utf-8")
    chat_page.html = demo.replace(
        "</style>",
        ":root { color-scheme: dark; } body { background: #0d1117; color: #e6edf3; }</style>",
    )
    token = feedback_token_for(session_id="demo-dark")
    page = open_chat(browser, chat_page)
    page.emulate_media(color_scheme="dark")
    page.goto(
        f"{chat_page.origin}/?service={live_server.url}&session=demo-dark&token={token}&lang=en"
    )
    page.get_by_role("button", name="Not useful", exact=True).click()
    page.get_by_role("button", name="Send feedback").click()
    expect(page.get_by_role("alert")).to_have_text("Please choose a reason.")

    parts = (
        ".dfb > p, .dfb legend, .dfb fieldset label, .dfb .dfb-field, .dfb .dfb-count, "
        ".dfb .dfb-error"
    )
    ratios = contrasts(page, parts)
    finish(page, "feedback-widget-on-a-dark-page")

    assert len(ratios) >= 8, ratios
    assert not poor(ratios), ratios


# --- Contrast in the console ----------------------------------------------------------


@pytest.mark.parametrize("how", ["system", "chosen"])
def test_review_states_keep_their_contrast_in_the_dark_theme(
    browser,  # noqa: F811
    live_server,
    admin_user,
    how,
) -> None:
    DiagnosisSessionFactory(session_id="bad-new", not_useful=True, evidence_score=20)
    for state in (ReviewState.TRIAGED, ReviewState.RESOLVED):
        BadCaseReviewFactory(session__session_id=f"bad-{state}", state=state)
    page = log_in(browser, live_server, admin_user, english=True)
    page.goto(f"{page.base_url}/admin/feedback/badcase/")
    dark(page, how)

    ratios = contrasts(page, "#result_list .review-state")
    finish(page, f"review_states_dark_{how}")

    assert len(ratios) == 3, ratios
    assert not poor(ratios), ratios


@pytest.mark.parametrize("how", ["system", "chosen"])
def test_a_failed_span_and_an_ignored_hint_keep_their_contrast_in_the_dark_theme(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
    how,
) -> None:
    page = open_timeline(browser, live_server, admin_user, make_client)
    dark(page, how)
    failed = page.locator("#session-timeline details.error")
    failed.locator("summary").click()
    expect(failed.locator("table.attributes .ignored")).to_be_visible()

    ratios = contrasts(page, "#session-timeline .error summary .label")
    ratios |= contrasts(page, "#session-timeline table.attributes .ignored")
    finish(page, f"timeline_dark_{how}")

    assert not poor(ratios), ratios


def test_score_badges_keep_their_contrast_in_the_light_theme(
    browser,  # noqa: F811
    live_server,
    admin_user,
) -> None:
    for score in (0, 20, 50, 80):
        DiagnosisSessionFactory(session_id=f"scored-{score}", succeeded=True, evidence_score=score)
    DiagnosisSessionFactory(session_id="scored-later", succeeded=True)
    page = log_in(browser, live_server, admin_user, english=True)
    page.goto(f"{page.base_url}{SESSIONS}")

    ratios = contrasts(page, "#result_list .score")
    finish(page, "score_badges_light")

    assert len(ratios) == 5, ratios
    assert not poor(ratios), ratios


# --- The session timeline -------------------------------------------------------------

# Where each row's duration lies against the timeline's field, and the page's width.
DURATIONS = """() => {
  const field = document.querySelector('.form-row.field-timeline').getBoundingClientRect();
  return {
    window: window.innerWidth,
    page: document.documentElement.scrollWidth,
    field: [field.left, field.right],
    durations: [...document.querySelectorAll('#session-timeline summary .ms')].map(ms => {
      const box = ms.getBoundingClientRect();
      return [box.left, box.right, ms.textContent];
    }),
  };
}"""


def test_the_timeline_shows_every_duration_on_a_390_pixel_phone(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
) -> None:
    page = open_timeline(browser, live_server, admin_user, make_client, width=390)

    places = page.evaluate(DURATIONS)
    finish(page, "timeline_at_390")

    left, right = places["field"]
    assert places["page"] <= places["window"] == 390, places
    assert [text for *_, text in places["durations"]] == ["900 ms", "200 ms"], places
    assert all(left <= start and end <= right for start, end, _ in places["durations"]), places


def test_a_failed_span_says_so_in_words_and_its_row_shows_that_it_opens(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
) -> None:
    page = open_timeline(browser, live_server, admin_user, make_client)
    timeline = page.locator("#session-timeline")
    failed = timeline.locator("details.error summary")
    marker = "summary => getComputedStyle(summary, '::before').content"

    expect(failed).to_contain_text("failed")
    expect(timeline.locator("details:not(.error) summary")).not_to_contain_text("failed")
    closed = failed.evaluate(marker)
    failed.click()
    opened = failed.evaluate(marker)
    places = page.evaluate(DURATIONS)
    finish(page, "timeline_failed_span")

    left, right = places["field"]
    assert all(left <= start and end <= right for start, end, _ in places["durations"]), places

    assert closed not in ("none", "normal", '""'), closed
    assert opened not in ("none", "normal", '""', closed), opened


# A visible mark's colour against the colour behind it: the bar against its track, a
# swatch and a chart's bar against the page.
MARKS = r"""() => {
  const background = element => getComputedStyle(element).backgroundColor;
  const behind = element => {
    for (let node = element.parentElement; node; node = node.parentElement) {
      const colour = background(node);
      if (!/, 0\)$/.test(colour)) return colour;
    }
    return 'rgb(255, 255, 255)';
  };
  const marks = [...document.querySelectorAll(
    '#session-timeline .bar, .overview-page .swatch')];
  const bars = [...document.querySelectorAll('.overview-page svg.chart rect.useful')];
  return [
    ...marks.map(m => [m.className, background(m), behind(m)]),
    ...bars.map(b => ['chart', getComputedStyle(b).fill, behind(b.ownerSVGElement)]),
  ];
}"""


def test_timeline_bars_and_chart_swatches_stay_visible_in_forced_colours(
    browser,  # noqa: F811
    live_server,
    admin_user,
    make_client,
) -> None:
    page = open_timeline(browser, live_server, admin_user, make_client)
    page.emulate_media(forced_colors="active")
    marks = page.evaluate(MARKS)
    page.goto(f"{page.base_url}/admin/overview/")
    expect(page.locator(".overview-page .swatch").first).to_be_visible()
    marks += page.evaluate(MARKS)
    finish(page, "forced_colours_overview")

    assert len(marks) >= 4, marks
    assert all(colour != behind for _, colour, behind in marks), marks


# --- Case pages -----------------------------------------------------------------------


def test_the_import_file_input_is_described_by_its_help_and_its_error(
    browser,  # noqa: F811
    live_server,
    admin_user,
    tmp_path,
) -> None:
    page = log_in(browser, live_server, admin_user, english=True)
    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/import/")
    help_text = ".jsonl or .csv with the API's case fields, or one Markdown runbook (.md)."
    upload = page.get_by_label("Case file")
    expect(upload).to_have_accessible_description(help_text)

    notes = tmp_path / "notes.txt"
    notes.write_text("not a case file", encoding="utf-8")
    upload.set_input_files(notes)
    page.get_by_role("button", name="Import").click()
    upload = page.get_by_label("Case file")
    expect(upload).to_have_accessible_description(f"{help_text} Upload a .jsonl, .csv or .md file.")
    finish(page, "import_described")


def test_the_merge_confirmation_fits_a_390_pixel_phone(
    browser,  # noqa: F811
    live_server,
    admin_user,
) -> None:
    url = "https://grafana.example.com/d/mysql-overview/mysql-overview?orgId=1&var-instance="
    older = CaseLibraryFactory(title="订单库锁等待超时导致下单失败", solution=url * 3)
    newer = CaseLibraryFactory(title="订单库锁等待超时，下单失败", solution=url * 3)
    flag_near_duplicates(newer, older)
    page = log_in(browser, live_server, admin_user, width=390, english=False)
    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/{newer.pk}/merge/{older.pk}/")
    expect(page.locator("table.merge-pair")).to_be_visible()

    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    finish(page, "merge_confirmation_at_390")

    assert widths[0] <= widths[1] == 390, widths


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_case_lists_inline_fields_are_named_after_their_column(
    browser,  # noqa: F811
    live_server,
    admin_user,
    english,
) -> None:
    CaseLibraryFactory(title="订单服务 504", error_code="HTTP 504")
    page = log_in(browser, live_server, admin_user, english=english)
    page.goto(f"{page.base_url}/admin/caselibrary/caselibrary/")

    def header(column: str) -> str:
        return page.locator(f"#result_list thead th.column-{column} .text").text_content().strip()

    code = page.locator("#result_list td.field-error_code input")
    category = page.locator("#result_list td.field-fault_category select")

    expect(code).to_have_accessible_name(header("error_code").strip())
    expect(category).to_have_accessible_name(header("fault_category").strip())
    expect(code).to_have_attribute("title", "HTTP 504")
    finish(page, f"case_list_field_names_{'english' if english else 'chinese'}")


# --- Links in running text ------------------------------------------------------------

UNDERLINED = "link => getComputedStyle(link).textDecorationLine"


def test_links_in_running_text_are_underlined(
    browser,  # noqa: F811
    live_server,
    admin_user,
) -> None:
    case = CaseLibraryFactory(title="订单服务 504")
    CaseReuse.objects.create(case=case, l0_hits=2, l1_hits=1)
    page = log_in(browser, live_server, admin_user, english=True)
    lines = {}
    for path, selector in [
        ("/admin/overview/", ".overview-window a"),
        ("/admin/overview/attribution/", ".overview-window a"),
        ("/admin/caselibrary/caselibrary/", "#result_list td.field-reuse_column a"),
    ]:
        page.goto(f"{page.base_url}{path}")
        links = page.locator(selector)
        expect(links.first).to_be_visible()
        lines |= {f"{path} {link.inner_text()}": link.evaluate(UNDERLINED) for link in links.all()}
    finish(page, "links_underlined")

    assert len(lines) >= 5, lines
    assert all("underline" in line for line in lines.values()), lines
