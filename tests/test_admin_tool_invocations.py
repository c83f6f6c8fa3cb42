"""A session's tool invocations in the admin at scale: the session and bad-case pages
show the first ones, say how many there are and link to the list of them all, which
pages through every one, read-only, for those who may read sessions."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse

from diagnosis.models import DiagnosisSession, InvocationStatus, ToolInvocation, ToolKind
from feedback.admin.invocations import INVOCATIONS_SHOWN
from tests.admin_pages import member_of
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/diagnosis/toolinvocation/"
ROW = re.compile(r'<tr class="invocation">')
TOOL_CELL = re.compile(r'<td class="field-tool_name">([^<]*)</td>')


def session_page(session: DiagnosisSession) -> str:
    return f"/admin/diagnosis/diagnosissession/{session.pk}/change/"


def bad_case_page(session: DiagnosisSession) -> str:
    return f"/admin/feedback/badcase/{session.pk}/change/"


def record_calls(session: DiagnosisSession, count: int, **fields) -> None:  # type: ignore[no-untyped-def]
    """`count` calls of the session, named Tool0000, Tool0001, … in the order recorded."""
    ToolInvocation.objects.bulk_create(
        ToolInvocationFactory.build(session=session, tool_name=f"Tool{n:04d}", **fields)
        for n in range(count)
    )


def list_link(page: str) -> str:
    match = re.search(rf'href="({LIST}\?[^"]*)"', page)
    assert match, "no link to the list of the session's tool invocations"
    return match.group(1).replace("&amp;", "&")


def every_listed_tool(client, url: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The tool names of every page of the list, page after page."""
    tools: list[str] = []
    for number in range(1, 100):
        response = client.get(f"{url}&p={number}")
        if response.status_code != 200:  # past the last page
            break
        names = TOOL_CELL.findall(response.content.decode())
        if not names:
            break
        tools += names
    return tools


# --- the session's page and the bad case's ---------------------------------------------


@pytest.mark.parametrize("page_of", [session_page, bad_case_page])
def test_a_session_with_more_calls_than_shown_shows_the_first_ones_and_says_how_many(
    admin_client, page_of
) -> None:
    session = DiagnosisSessionFactory(not_useful=True, evidence_score=20)
    record_calls(session, INVOCATIONS_SHOWN + 20)

    response = admin_client.get(page_of(session))

    page = response.content.decode()
    assert len(ROW.findall(page)) == INVOCATIONS_SHOWN
    assert "Tool0000" in page and f"Tool{INVOCATIONS_SHOWN - 1:04d}" in page
    assert f"Tool{INVOCATIONS_SHOWN:04d}" not in page
    assert (
        f"The first {INVOCATIONS_SHOWN} of {INVOCATIONS_SHOWN + 20} tool invocations are shown"
        in text(response)
    )


@pytest.mark.parametrize("page_of", [session_page, bad_case_page])
def test_a_session_with_few_calls_shows_them_all_with_no_count_and_no_link(
    admin_client, page_of
) -> None:
    session = DiagnosisSessionFactory(not_useful=True, evidence_score=20)
    record_calls(session, 3)

    page = admin_client.get(page_of(session)).content.decode()

    assert len(ROW.findall(page)) == 3
    assert "tool invocations are shown" not in page
    assert f'href="{LIST}?' not in page


@pytest.mark.parametrize("page_of", [session_page, bad_case_page])
def test_the_link_under_a_cut_table_pages_through_every_call_of_the_session(
    admin_client, page_of
) -> None:
    session = DiagnosisSessionFactory(not_useful=True, evidence_score=20)
    record_calls(session, INVOCATIONS_SHOWN + 20)
    record_calls(DiagnosisSessionFactory(), 5, query="another session's call")

    link = list_link(admin_client.get(page_of(session)).content.decode())
    tools = every_listed_tool(admin_client, link)

    assert tools == [f"Tool{n:04d}" for n in range(INVOCATIONS_SHOWN + 20)]


@pytest.mark.parametrize("calls", [20, INVOCATIONS_SHOWN + 100])
def test_the_session_page_runs_no_more_queries_for_thousands_of_calls(
    admin_client, django_assert_max_num_queries, calls
) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=65)
    record_calls(session, calls)

    # The page as it was (10), one count of the calls when they are cut short, and the
    # timeline's count of its rows (spans, else calls) when it is cut short too.
    with django_assert_max_num_queries(13):
        response = admin_client.get(session_page(session))

    assert len(ROW.findall(response.content.decode())) == min(calls, INVOCATIONS_SHOWN)


@pytest.mark.parametrize("calls", [20, INVOCATIONS_SHOWN + 100])
def test_the_bad_case_page_runs_no_more_queries_for_thousands_of_calls(
    admin_client, django_assert_max_num_queries, calls
) -> None:
    session = DiagnosisSessionFactory(not_useful=True, evidence_score=20)
    record_calls(session, calls)

    # The page as it was (8) and one count of the calls when they are cut short.
    with django_assert_max_num_queries(9):
        response = admin_client.get(bad_case_page(session))

    assert len(ROW.findall(response.content.decode())) == min(calls, INVOCATIONS_SHOWN)


def test_the_count_and_the_link_are_said_in_chinese(client, admin_user, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    client.force_login(admin_user)
    session = DiagnosisSessionFactory(succeeded=True)
    record_calls(session, INVOCATIONS_SHOWN + 20)

    page = text(client.get(session_page(session)))

    shown, total = INVOCATIONS_SHOWN, INVOCATIONS_SHOWN + 20
    assert f"仅显示最先记录的 {shown} 条工具调用，共 {total} 条。" in page
    assert "分页查看全部" in page


# --- the list of a session's calls ----------------------------------------------------


def test_the_list_of_a_session_shows_its_calls_in_the_order_recorded(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    record_calls(session, 3)
    record_calls(DiagnosisSessionFactory(), 2, query="another session's call")

    response = admin_client.get(LIST, {"session": session.session_id})

    assert response.status_code == 200
    assert f"<h1>Tool invocations of session {session.session_id}</h1>" in text(response)
    assert TOOL_CELL.findall(response.content.decode()) == ["Tool0000", "Tool0001", "Tool0002"]
    assert "another session&#x27;s call" not in response.content.decode()


def test_the_list_filters_by_kind_and_status(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    ToolInvocationFactory(session=session, tool_name="Docs", kind=ToolKind.RETRIEVAL)
    ToolInvocationFactory(session=session, tool_name="Shell", kind=ToolKind.OTHER)
    ToolInvocationFactory(
        session=session, tool_name="Broken", status=InvocationStatus.FAILED, match_level=None
    )

    actions = admin_client.get(LIST, {"session": session.session_id, "kind": ToolKind.OTHER})
    failed = admin_client.get(LIST, {"status": InvocationStatus.FAILED})

    assert TOOL_CELL.findall(actions.content.decode()) == ["Shell"]
    assert TOOL_CELL.findall(failed.content.decode()) == ["Broken"]


def test_each_call_in_the_list_links_to_its_session(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, session_id="s-linked")
    record_calls(session, 2)

    page = admin_client.get(LIST).content.decode()

    assert page.count(f'<a href="{session_page(session)}">s-linked</a>') == 2


def test_a_page_of_the_list_runs_the_same_queries_however_many_calls(
    admin_client, django_assert_max_num_queries
) -> None:
    sessions = DiagnosisSessionFactory.create_batch(3)
    for session in sessions:
        record_calls(session, 150)

    # Django's session and user, the capped count's keys, the page's keys, its rows
    # with their sessions.
    with django_assert_max_num_queries(6):
        whole = admin_client.get(LIST)
    with django_assert_max_num_queries(6):
        one = admin_client.get(LIST, {"session": sessions[1].session_id, "p": 2})

    assert len(TOOL_CELL.findall(whole.content.decode())) == 100
    assert len(TOOL_CELL.findall(one.content.decode())) == 50


def test_the_list_is_read_only(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    call = ToolInvocationFactory(session=session)

    page = admin_client.get(LIST).content.decode()

    assert 'name="action"' not in page and 'name="_selected_action"' not in page
    assert f"{LIST}add/" not in page
    assert admin_client.get(f"{LIST}add/").status_code == 403
    assert admin_client.post(f"{LIST}{call.pk}/delete/", {"post": "yes"}).status_code == 403
    assert admin_client.post(f"{LIST}{call.pk}/change/", {"tool_name": "x"}).status_code == 403
    assert ToolInvocation.objects.filter(pk=call.pk, tool_name=call.tool_name).exists()


# --- who may read it ---------------------------------------------------------------------


def test_staff_who_may_not_read_sessions_cannot_read_the_list(staff_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    ToolInvocationFactory(session=session, tool_name="Secret")

    response = staff_client.get(LIST, {"session": session.session_id})

    assert response.status_code == 403


def test_the_invocations_own_view_permission_alone_does_not_open_the_list(staff_client) -> None:
    user = get_user_model().objects.get(username="ops.staff")
    user.user_permissions.add(Permission.objects.get(codename="view_toolinvocation"))
    ToolInvocationFactory(tool_name="Secret")

    assert staff_client.get(LIST).status_code == 403


def test_staff_who_may_read_sessions_read_the_list_and_find_it_on_the_index() -> None:
    viewer = member_of("viewer")
    session = DiagnosisSessionFactory(succeeded=True)
    ToolInvocationFactory(session=session, tool_name="Visible")

    response = viewer.get(LIST, {"session": session.session_id})

    assert response.status_code == 200
    assert TOOL_CELL.findall(response.content.decode()) == ["Visible"]
    assert reverse("admin:diagnosis_toolinvocation_changelist") in text(viewer.get("/admin/"))
