"""Two curators on one case: a save from the case's page or from the list's editable
columns writes only what that page changed (compared with the values it showed), so a
colleague's save of another field in between survives; a change of a field the colleague
changed too since the page was opened is refused, naming the field and its value now."""

from html.parser import HTMLParser

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.test import Client

from caselibrary.models import CaseLibrary
from tests.admin_pages import member_of
from tests.factories import CaseLibraryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/caselibrary/caselibrary/"


def page_url(case: CaseLibrary) -> str:
    return f"{LIST}{case.pk}/change/"


class _HiddenCopies(HTMLParser):
    """The hidden copies of the values a page showed (`initial-…` inputs), as a browser
    reads them (a value attribute left out is an empty value)."""

    def __init__(self) -> None:
        super().__init__()
        self.copies: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        name = found.get("name") or ""
        if tag == "input" and found.get("type") == "hidden" and name.startswith("initial-"):
            self.copies[name] = (found.get("value") or "").replace("\r\n", "\n")


def hidden_copies(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    parser = _HiddenCopies()
    parser.feed(response.content.decode())
    return parser.copies


def form_values(form) -> dict[str, str]:  # type: ignore[no-untyped-def]
    values = {}
    for name in form.fields:
        value = form[name].value()
        values[form.add_prefix(name)] = "" if value is None else str(getattr(value, "pk", value))
    return values


def opened_page(client: Client, case: CaseLibrary) -> dict[str, str]:
    """The case's page as a browser posts it back untouched."""
    response = client.get(page_url(case))
    assert response.status_code == 200
    return {**form_values(response.context["adminform"].form), **hidden_copies(response)}


def opened_list(client: Client, query: str = "") -> dict[str, str]:
    """The list's editable rows as a browser posts them back when Save is pressed."""
    response = client.get(LIST + query)
    assert response.status_code == 200
    formset = response.context["cl"].formset
    data = {"_save": "Save"}
    management = formset.management_form
    for name in management.fields:
        data[management.add_prefix(name)] = str(management[name].value())
    for form in formset.forms:
        data.update(form_values(form))
    return {**data, **hidden_copies(response)}


def row_of(data: dict[str, str], case: CaseLibrary) -> str:
    """The prefix of the case's row in a posted list ("form-0-" for the first row)."""
    for name, value in data.items():
        if name.endswith("-case_id") and value == str(case.pk):
            return name.removesuffix("case_id")
    raise AssertionError(f"{case.pk} is not a row of the list")


def save_page(client: Client, case: CaseLibrary, data: dict[str, str], **changes: str):  # type: ignore[no-untyped-def]
    return client.post(page_url(case), {**data, **changes})


@pytest.fixture
def colleague() -> Client:
    return member_of("curator", "ops.chen")


@pytest.fixture
def case() -> CaseLibrary:
    return CaseLibraryFactory(
        title="交换机端口抖动",
        fault_category="NETWORK",
        error_code="E6087",
        root_cause="上联端口光模块老化",
        solution="更换光模块",
    )


def last_change_by(username: str) -> LogEntry:
    return LogEntry.objects.filter(action_flag=CHANGE, user__username=username).latest("pk")


# --- the list's editable columns --------------------------------------------------------


def test_a_category_changed_in_the_list_keeps_the_error_code_a_colleague_saved_meanwhile(
    admin_client, colleague, case
) -> None:
    seen_in_list = opened_list(admin_client, "?fault_category=NETWORK")
    response = save_page(
        colleague,
        case,
        opened_page(colleague, case),
        error_code="B-EDIT-CODE",
        root_cause="上联端口光模块老化\n另：交换机固件有已知缺陷",
    )
    assert response.status_code == 302

    row = row_of(seen_in_list, case)
    response = admin_client.post(
        LIST + "?fault_category=NETWORK", {**seen_in_list, f"{row}fault_category": "DATABASE"}
    )

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.fault_category, case.error_code) == ("DATABASE", "B-EDIT-CODE")
    assert case.root_cause == "上联端口光模块老化\n另：交换机固件有已知缺陷"
    assert case.updated_by == "admin"
    assert last_change_by("admin").get_change_message() == "Changed Fault category."


def test_an_error_code_changed_in_the_list_after_a_colleague_changed_it_is_refused(
    admin_client, colleague, case
) -> None:
    seen_in_list = opened_list(admin_client)
    save_page(colleague, case, opened_page(colleague, case), error_code="B-EDIT-CODE")

    row = row_of(seen_in_list, case)
    response = admin_client.post(LIST, {**seen_in_list, f"{row}error_code": "A-EDIT-CODE"})

    assert response.status_code == 200
    errors = response.context["cl"].formset.forms[int(row.split("-")[1])].errors
    assert "error_code" in errors
    said = " ".join(errors["error_code"])
    assert "Error code" in said and "B-EDIT-CODE" in said and "Reload" in said
    case.refresh_from_db()
    assert (case.error_code, case.updated_by) == ("B-EDIT-CODE", "ops.chen")
    assert not LogEntry.objects.filter(user__username="admin").exists()


def test_a_list_row_a_colleague_changed_but_the_operator_did_not_is_left_alone(
    admin_client, colleague, case
) -> None:
    other = CaseLibraryFactory(fault_category="NETWORK", error_code="E1")
    seen_in_list = opened_list(admin_client)
    save_page(colleague, case, opened_page(colleague, case), fault_category="DATABASE")

    response = admin_client.post(
        LIST, {**seen_in_list, f"{row_of(seen_in_list, other)}error_code": "E2"}
    )

    assert response.status_code == 302
    case.refresh_from_db()
    other.refresh_from_db()
    assert (case.fault_category, case.updated_by) == ("DATABASE", "ops.chen")
    assert other.error_code == "E2"
    assert list(
        LogEntry.objects.filter(user__username="admin").values_list("object_id", flat=True)
    ) == [str(other.pk)]


# --- the case's page --------------------------------------------------------------------


def test_a_title_change_keeps_the_error_code_a_colleague_saved_meanwhile(
    admin_client, colleague, case
) -> None:
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), error_code="B-SECOND-EDIT")

    response = save_page(admin_client, case, seen_by_admin, title="交换机端口抖动（已复核）")

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.title, case.error_code) == ("交换机端口抖动（已复核）", "B-SECOND-EDIT")
    assert last_change_by("admin").get_change_message() == "Changed Title."
    assert last_change_by("ops.chen").get_change_message() == "Changed Error code."


def test_a_page_saved_with_nothing_changed_keeps_a_colleagues_changes(
    admin_client, colleague, case
) -> None:
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), title="新标题", root_cause="新的根因")

    response = save_page(admin_client, case, seen_by_admin)

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.title, case.root_cause, case.updated_by) == ("新标题", "新的根因", "ops.chen")


def test_the_history_names_the_case_by_its_title_now(admin_client, colleague, case) -> None:
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), title="交换机端口抖动（已定位）")

    save_page(admin_client, case, seen_by_admin, error_code="E6088")

    entry = last_change_by("admin")
    assert (entry.object_repr, entry.get_change_message()) == (
        "交换机端口抖动（已定位）",
        "Changed Error code.",
    )


def test_a_field_a_colleague_changed_since_the_page_was_opened_is_not_overwritten(
    admin_client, colleague, case
) -> None:
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), error_code="B-SECOND-EDIT")

    response = save_page(
        admin_client, case, seen_by_admin, error_code="A-EDIT", title="交换机端口抖动（已复核）"
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["error_code"]
    said = " ".join(errors["error_code"])
    assert "Error code" in said and "“B-SECOND-EDIT”" in said and "Reload" in said
    case.refresh_from_db()
    assert (case.title, case.error_code) == ("交换机端口抖动", "B-SECOND-EDIT")


def test_a_refused_page_refuses_again_until_it_is_reloaded(admin_client, colleague, case) -> None:
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), root_cause="同事写的根因")
    refused = save_page(admin_client, case, seen_by_admin, root_cause="我写的根因")
    assert refused.status_code == 200

    # The page as shown again, with the refused value still in the field.
    shown_again = {**form_values(refused.context["adminform"].form), **hidden_copies(refused)}
    again = save_page(admin_client, case, shown_again)
    assert again.status_code == 200
    reloaded = save_page(
        admin_client, case, opened_page(admin_client, case), root_cause="我写的根因"
    )
    assert reloaded.status_code == 302
    case.refresh_from_db()
    assert case.root_cause == "我写的根因"


def test_a_field_the_colleague_changed_the_same_way_is_no_conflict(
    admin_client, colleague, case
) -> None:
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), fault_category="DATABASE")

    response = save_page(admin_client, case, seen_by_admin, fault_category="DATABASE")

    assert response.status_code == 302
    case.refresh_from_db()
    assert case.fault_category == "DATABASE"


def test_an_emptied_error_code_a_colleague_filled_meanwhile_is_refused_and_says_so(
    admin_client, colleague
) -> None:
    case = CaseLibraryFactory(error_code=None)
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), error_code="ORA-00060")
    # The operator fills it too, differently.
    response = save_page(admin_client, case, seen_by_admin, error_code="ORA-01555")

    assert response.status_code == 200
    assert "“ORA-00060”" in " ".join(response.context["adminform"].form.errors["error_code"])
    case.refresh_from_db()
    assert case.error_code == "ORA-00060"


def test_a_colleague_emptying_a_field_is_said_as_empty(admin_client, colleague, case) -> None:
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), error_code="")

    response = save_page(admin_client, case, seen_by_admin, error_code="E6099")

    said = " ".join(response.context["adminform"].form.errors["error_code"])
    assert "Error code was emptied by a colleague" in said
    case.refresh_from_db()
    assert case.error_code is None


# --- a text shown once as root cause and solution -----------------------------------------


@pytest.fixture
def one_text_case() -> CaseLibrary:
    return CaseLibraryFactory(
        source_type="AUTO",
        root_cause="重启 DNS 缓存服务",
        solution="重启 DNS 缓存服务",
        error_code="DNS-1",
    )


def test_a_root_cause_change_keeps_the_solution_a_colleague_wrote_meanwhile(
    admin_client, colleague, one_text_case
) -> None:
    case = one_text_case
    seen_by_admin = opened_page(admin_client, case)
    assert seen_by_admin["solution"] == ""
    save_page(colleague, case, opened_page(colleague, case), solution="清空缓存后重启")

    response = save_page(admin_client, case, seen_by_admin, root_cause="DNS 缓存服务内存泄漏")

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.root_cause, case.solution) == ("DNS 缓存服务内存泄漏", "清空缓存后重启")


def test_a_root_cause_change_still_changes_the_text_shown_once(
    admin_client, colleague, one_text_case
) -> None:
    case = one_text_case
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), error_code="DNS-2")

    response = save_page(admin_client, case, seen_by_admin, root_cause="DNS 缓存服务内存泄漏")

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.root_cause, case.solution, case.error_code) == (
        "DNS 缓存服务内存泄漏",
        "DNS 缓存服务内存泄漏",
        "DNS-2",
    )


def test_a_solution_written_after_a_colleague_wrote_one_is_refused(
    admin_client, colleague, one_text_case
) -> None:
    case = one_text_case
    seen_by_admin = opened_page(admin_client, case)
    save_page(colleague, case, opened_page(colleague, case), solution="清空缓存后重启")

    response = save_page(admin_client, case, seen_by_admin, solution="换一台 DNS 服务器")

    assert response.status_code == 200
    assert "清空缓存后重启" in " ".join(response.context["adminform"].form.errors["solution"])
    case.refresh_from_db()
    assert case.solution == "清空缓存后重启"


def test_a_text_kept_as_sent_is_neither_rewritten_nor_carried_twice_by_the_page(
    admin_client, colleague
) -> None:
    answer = "    SHOW PROCESSLIST 里有长事务\r\n\r\n先 kill 再扩容\n"
    case = CaseLibraryFactory(root_cause=answer, solution="扩容连接池")
    seen_by_admin = opened_page(admin_client, case)
    assert "SHOW PROCESSLIST" not in seen_by_admin["initial-root_cause"]
    save_page(colleague, case, opened_page(colleague, case), error_code="ORA-00018")

    response = save_page(admin_client, case, seen_by_admin, title="会话数超限")

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.title, case.root_cause, case.error_code) == ("会话数超限", answer, "ORA-00018")
    assert last_change_by("admin").get_change_message() == "Changed Title."
