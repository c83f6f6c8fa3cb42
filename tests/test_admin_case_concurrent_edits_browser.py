"""Two curators on one case, the first in a real browser: what the browser posts (the hidden
copies of the values shown, a textarea's line breaks) keeps a colleague's save of another
field, and a change of the field the colleague changed is refused where it is made."""

import pytest
from playwright.sync_api import expect

from caselibrary.models import CaseLibrary
from caselibrary.services.cases import case_update
from tests.factories import CaseLibraryFactory
from tests.test_admin_browser import browser, finish, log_in, operator  # noqa: F401

pytestmark = pytest.mark.browser

LIST = "/admin/caselibrary/caselibrary/"


@pytest.fixture
def case(operator) -> CaseLibrary:  # type: ignore[no-untyped-def]  # noqa: F811
    return CaseLibraryFactory(
        title="交换机端口抖动",
        fault_category="NETWORK",
        error_code="E6087",
        root_cause="上联端口光模块老化\n\n    光功率 -18 dBm",
        solution="更换光模块",
    )


@pytest.fixture
def page(browser, live_server, operator, settings):  # type: ignore[no-untyped-def]  # noqa: F811
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    return log_in(browser, live_server, operator)


def colleague_saves(case: CaseLibrary, **changes: str) -> None:
    case_update(case=CaseLibrary.objects.get(pk=case.pk), updated_by="ops.chen", **changes)


def test_a_category_saved_from_the_list_keeps_a_colleagues_error_code(page, case) -> None:
    page.goto(f"{page.base_url}{LIST}?fault_category=NETWORK")
    colleague_saves(case, error_code="B-EDIT-CODE", root_cause="上联端口光模块老化\n另：固件缺陷")

    page.select_option("#result_list select[name$='-fault_category']", "DATABASE")
    page.click("#changelist-form input[name='_save']")
    expect(page.locator(".messagelist .success")).to_have_count(1)
    finish(page, "case_list_save_keeps_colleague")

    case.refresh_from_db()
    assert (case.fault_category, case.error_code) == ("DATABASE", "B-EDIT-CODE")
    assert case.root_cause == "上联端口光模块老化\n另：固件缺陷"


def test_a_title_saved_from_the_case_page_keeps_a_colleagues_error_code(page, case) -> None:
    page.goto(f"{page.base_url}{LIST}{case.pk}/change/")
    colleague_saves(case, error_code="B-SECOND-EDIT")

    page.fill("#id_title", "交换机端口抖动（已复核）")
    page.click("input[name='_save']")
    expect(page.locator(".messagelist .success")).to_have_count(1)
    finish(page, "case_page_save_keeps_colleague")

    case.refresh_from_db()
    assert (case.title, case.error_code) == ("交换机端口抖动（已复核）", "B-SECOND-EDIT")
    assert case.root_cause == "上联端口光模块老化\n\n    光功率 -18 dBm"


def test_an_error_code_a_colleague_changed_meanwhile_is_refused_on_the_page(page, case) -> None:
    page.goto(f"{page.base_url}{LIST}{case.pk}/change/")
    colleague_saves(case, error_code="B-SECOND-EDIT")

    page.fill("#id_error_code", "A-EDIT")
    page.click("input[name='_save']")
    error = page.locator(".field-error_code .errorlist")
    expect(error).to_contain_text("B-SECOND-EDIT")
    finish(page, "case_page_refuses_colleagues_field")

    case.refresh_from_db()
    assert case.error_code == "B-SECOND-EDIT"
