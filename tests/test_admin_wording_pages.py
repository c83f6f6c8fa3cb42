"""What an operator reads in the console's Chinese: the header, the overview, the rule
factors' descriptions, and the layout of lists and forms in a browser."""

import re

import pytest
from playwright.sync_api import expect

from evaluation.rules import InvocationFacts, evaluate
from tests.admin_wording_pages import CASES, SESSIONS, in_english
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    evaluation,
)
from tests.page_text import text
from tests.test_admin_browser import LINES, browser, finish, log_in, operator  # noqa: F401

pytestmark = pytest.mark.django_db


# --- the header --------------------------------------------------------------------------


def test_the_header_offers_no_view_site_link_to_a_page_that_does_not_exist(
    admin_client, client
) -> None:
    page = text(admin_client.get("/admin/"))

    assert "查看站点" not in page and 'href="/"' not in page
    assert client.get("/").status_code == 404


def test_the_task_queue_section_is_named_in_chinese(admin_client) -> None:
    page = text(admin_client.get("/admin/"))

    assert "任务队列" in page
    assert "Task queue" not in page


# --- the overview ------------------------------------------------------------------------

OVERVIEW = "/admin/overview/"


def findability(page: str) -> str:
    shown = re.search(r'<p id="findability">(.*?)</p>', page, flags=re.S)
    assert shown, "no findability on the overview"
    return " ".join(shown.group(1).split())


def test_the_overview_says_who_checks_findability_rather_than_printing_a_command(
    admin_client,
) -> None:
    shown = findability(admin_client.get(OVERVIEW).content.decode())

    assert shown == (
        "尚未检查可找回率（没有定时任务检查它：由运维人员在服务器上运行 "
        "manage.py check_findability）。"
    )


def test_the_overview_says_the_same_in_english(admin_client) -> None:
    in_english(admin_client)

    shown = findability(admin_client.get(OVERVIEW).content.decode())

    assert shown == (
        "Findability not checked yet (no scheduled task checks it: whoever runs the "
        "service runs manage.py check_findability on the server)."
    )


# --- the rule factors' descriptions ------------------------------------------------------


def scored_by_the_rules(**counts: int):  # type: ignore[no-untyped-def]
    """A session scored by the rule engine itself, its descriptions as the API gives them."""
    facts = {"total": 0, "successful": 0, "retrieval": 0, "l0_hits": 0, "l1_hits": 0, **counts}
    session = DiagnosisSessionFactory(succeeded=True)
    session.self_evaluation = dict(
        evaluate(session_status="SUCCESS", facts=InvocationFacts(**facts))
    )
    session.save()
    return session


def factor_rows(page: str) -> list[tuple[str, str]]:
    """(delta, description) of each row of the rule factors' table."""
    table = re.search(r'<table class="factors">(.*?)</table>', page, flags=re.S)
    assert table, "no factor table"
    return re.findall(r'<td class="delta">([^<]*)</td><td>([^<]*)</td>', table.group(1))


def test_an_english_admin_describes_the_rule_factors_in_english(admin_client) -> None:
    session = scored_by_the_rules(total=2, successful=2, retrieval=1, l0_hits=1)
    in_english(admin_client)

    page = text(admin_client.get(f"{SESSIONS}{session.pk}/change/"))

    assert factor_rows(page) == [("+30", "2 successful tool calls"), ("+35", "L0 exact match")]
    # What the API returns is the rules' record, in Chinese by contract, as it was.
    session.refresh_from_db()
    assert [f["description"] for f in session.self_evaluation["factors"]] == [
        "有成功的工具调用(2次)",
        "L0 精确匹配命中",
    ]


def test_one_successful_call_and_no_call_at_all_read_naturally_in_english(admin_client) -> None:
    one = scored_by_the_rules(total=1, successful=1)
    none = scored_by_the_rules()
    in_english(admin_client)

    assert factor_rows(text(admin_client.get(f"{SESSIONS}{one.pk}/change/"))) == [
        ("+30", "1 successful tool call")
    ]
    assert factor_rows(text(admin_client.get(f"{SESSIONS}{none.pk}/change/"))) == [
        ("0", "no tool call")
    ]


def test_the_chinese_admin_shows_the_rules_descriptions_as_stored(admin_client) -> None:
    session = scored_by_the_rules(total=3, successful=2, retrieval=2, l1_hits=1)

    page = text(admin_client.get(f"{SESSIONS}{session.pk}/change/"))

    assert factor_rows(page) == [("+30", "有成功的工具调用(2次)"), ("+20", "L1 语义匹配命中")]


def test_a_description_no_rule_writes_is_shown_as_stored_in_english_too(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=65)
    session.self_evaluation = evaluation(65)
    session.save()
    in_english(admin_client)

    page = text(admin_client.get(f"{SESSIONS}{session.pk}/change/"))

    assert factor_rows(page) == [("+30", "2 successful tool calls"), ("+35", "test")]


# --- the layout, in a browser ------------------------------------------------------------

# A session list as the console shows it: ids and questions as agents send them (long, a
# URL without a space to break at), one session in each state that has a badge.
LONG_QUESTION = "订单服务在高峰期大量 504，网关日志显示上游连接池耗尽，payment-gateway 超时" * 2


LONG_URL = "https://grafana.internal.example.com/d/orders-504/checkout?orgId=1&from=now-6h&to=now"


def sessions_in_every_state() -> None:
    ids = "0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c1"
    DiagnosisSessionFactory(session_id=f"{ids}0", query=LONG_QUESTION)  # running
    DiagnosisSessionFactory(session_id=f"{ids}1", query=LONG_URL, useful=True, evidence_score=65)
    DiagnosisSessionFactory(session_id=f"{ids}2", query=LONG_QUESTION, not_useful=True)
    DiagnosisSessionFactory(session_id=f"{ids}3", query=LONG_URL, failed=True)


@pytest.mark.browser
@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
def test_the_session_lists_status_feedback_and_score_badges_keep_to_one_line(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    settings,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    sessions_in_every_state()
    page = log_in(browser, live_server, operator, width=1400, english=english)

    page.goto(f"{page.base_url}{SESSIONS}")

    badges = page.locator(
        "#result_list tbody :is(td.field-status, td.field-feedback, td.field-score_column .score)"
    )
    expect(badges).to_have_count(12)
    wrapped = [badge.inner_text() for badge in badges.all() if badge.evaluate(LINES) != 1]
    finish(page, f"session_badges_at_1400_{'english' if english else 'chinese'}")
    assert wrapped == []


@pytest.mark.browser
def test_a_cases_title_input_is_as_wide_as_its_texts(
    browser,  # noqa: F811
    live_server,
    operator,  # noqa: F811
    settings,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    case = CaseLibraryFactory(title=LONG_QUESTION[:100])
    page = log_in(browser, live_server, operator, width=1400, english=False)

    page.goto(f"{page.base_url}{CASES}{case.pk}/change/")

    title = page.locator("#id_title").bounding_box()
    root_cause = page.locator("#id_root_cause").bounding_box()
    finish(page, "case_title_at_1400")
    assert title and root_cause and title["width"] == root_cause["width"] >= 600
