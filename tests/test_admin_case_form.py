"""The case page of the admin (/admin/caselibrary/caselibrary/add/ and a case's page):
which sessions it takes as a case's source, typed or prefilled with ?from_session=, and
the line endings of the text it stores."""

import pytest
from django.contrib.admin.models import LogEntry

from caselibrary.models import CaseLibrary
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory
from tests.page_text import text

pytestmark = pytest.mark.django_db

ADD = "/admin/caselibrary/caselibrary/add/"
SESSIONS = "/admin/diagnosis/diagnosissession/"


def shown_messages(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(message) for message in response.context["messages"]]


def new_case(**fields: str) -> dict[str, str]:
    """The add form as the browser posts it."""
    return {
        "diagnosis": "",
        "title": "连接池耗尽",
        "fault_category": "GENERAL",
        "error_code": "",
        "root_cause": "连接池太小",
        "solution": "扩容连接池",
        **fields,
    }


def sessions_action_refusal(client, session) -> list[str]:  # type: ignore[no-untyped-def]
    """What the sessions list says when asked to make a case of `session`."""
    response = client.post(
        SESSIONS,
        {"action": "create_case", "_selected_action": [session.pk], "index": 0},
        follow=True,
    )
    return shown_messages(response)


SESSIONS_THAT_MAY_NOT_BECOME_A_CASE = {
    "running": {"status": "RUNNING"},
    "running with a partial answer": {"status": "RUNNING", "answer": "先看连接池"},
    "failed without an answer": {"failed": True},
}


# --- the source session -----------------------------------------------------------------


@pytest.mark.parametrize(
    "kind", SESSIONS_THAT_MAY_NOT_BECOME_A_CASE.values(), ids=SESSIONS_THAT_MAY_NOT_BECOME_A_CASE
)
def test_a_session_that_may_not_become_a_case_is_refused_with_the_reason_the_sessions_action_gives(
    admin_client, kind
) -> None:
    session = DiagnosisSessionFactory(session_id="demo-0299", **kind)
    action_says = sessions_action_refusal(admin_client, session)

    response = admin_client.post(ADD, new_case(diagnosis="demo-0299"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["diagnosis"] == action_says
    assert "会话 demo-0299 没有可用于创建案例的答案" in text(response)
    assert not CaseLibrary.objects.exists()


def test_a_finished_session_with_an_answer_is_taken_as_the_source(admin_client) -> None:
    DiagnosisSessionFactory(session_id="demo-0001", succeeded=True)

    response = admin_client.post(ADD, new_case(diagnosis="demo-0001"))

    assert response.status_code == 302
    assert CaseLibrary.objects.get().diagnosis_id == "demo-0001"


def test_a_mistyped_session_id_is_said_not_to_exist(admin_client) -> None:
    response = admin_client.post(ADD, new_case(diagnosis="demo-O299"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["diagnosis"] == ['会话 "demo-O299" 不存在。']
    assert "选择一个有效的选项" not in text(response)
    assert not CaseLibrary.objects.exists()


@pytest.mark.parametrize(
    "kind", SESSIONS_THAT_MAY_NOT_BECOME_A_CASE.values(), ids=SESSIONS_THAT_MAY_NOT_BECOME_A_CASE
)
def test_opening_the_page_from_a_session_that_may_not_become_a_case_shows_the_refusal_instead(
    admin_client, kind
) -> None:
    session = DiagnosisSessionFactory(session_id="demo-0299", **kind)
    action_says = sessions_action_refusal(admin_client, session)

    response = admin_client.get(f"{ADD}?from_session=demo-0299", follow=True)

    # The session's own page, where its status shows why.
    assert response.redirect_chain == [(f"{SESSIONS}{session.pk}/change/", 302)]
    assert shown_messages(response) == action_says


def test_opening_the_page_from_a_session_that_does_not_exist_says_so(admin_client) -> None:
    response = admin_client.get(f"{ADD}?from_session=demo-9999", follow=True)

    assert response.redirect_chain == [(SESSIONS, 302)]
    assert shown_messages(response) == ['会话 "demo-9999" 不存在。']


def test_opening_the_page_from_a_session_that_has_a_case_opens_that_case(admin_client) -> None:
    case = CaseLibraryFactory(diagnosis=DiagnosisSessionFactory(session_id="s-7", succeeded=True))

    response = admin_client.get(f"{ADD}?from_session=s-7", follow=True)

    assert response.redirect_chain == [(f"/admin/caselibrary/caselibrary/{case.pk}/change/", 302)]
    assert shown_messages(response) == ["会话 s-7 已有案例，已为你打开。"]


def test_opening_the_page_from_a_finished_session_prefills_it(admin_client) -> None:
    DiagnosisSessionFactory(session_id="s-7", succeeded=True, answer="根因\n处理")

    response = admin_client.get(f"{ADD}?from_session=s-7")

    assert response.status_code == 200
    assert response.context["adminform"].form.initial["root_cause"] == "根因\n处理"


# --- line endings -----------------------------------------------------------------------


def test_a_case_written_in_a_browser_is_stored_and_served_with_unix_line_endings(
    admin_client, api
) -> None:
    response = admin_client.post(
        ADD,
        new_case(
            title="连接池耗尽\r\n",
            root_cause="根因分析：\r\n连接池太小\r旧式换行",
            solution="1. 扩容\r\n2. 加告警\r\n",
        ),
    )

    assert response.status_code == 302
    case = CaseLibrary.objects.get()
    assert (case.title, case.root_cause, case.solution) == (
        "连接池耗尽",
        "根因分析：\n连接池太小\n旧式换行",
        "1. 扩容\n2. 加告警",
    )
    served = api.get(f"/api/cases/{case.pk}").json()
    assert served["rootCause"] == "根因分析：\n连接池太小\n旧式换行"
    assert served["solution"] == "1. 扩容\n2. 加告警"


def test_an_edit_written_in_a_browser_is_stored_with_unix_line_endings(admin_client) -> None:
    case = CaseLibraryFactory(root_cause="旧根因", solution="旧方案")

    response = admin_client.post(
        f"/admin/caselibrary/caselibrary/{case.pk}/change/",
        new_case(root_cause="根因分析：\r\n连接池太小", solution="扩容\r\n加告警"),
    )

    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.root_cause, case.solution) == ("根因分析：\n连接池太小", "扩容\n加告警")


def test_saving_a_case_page_unchanged_from_a_browser_changes_nothing(admin_client) -> None:
    case = CaseLibraryFactory(
        title="连接池耗尽",
        root_cause="根因分析：\n连接池太小",
        solution="1. 扩容\n2. 加告警",
        updated_by="ops.curator",
    )

    # The browser posts the page's textareas back with \r\n.
    response = admin_client.post(
        f"/admin/caselibrary/caselibrary/{case.pk}/change/",
        new_case(root_cause="根因分析：\r\n连接池太小", solution="1. 扩容\r\n2. 加告警"),
    )

    assert response.status_code == 302
    case.refresh_from_db()
    assert case.updated_by == "ops.curator"
    assert LogEntry.objects.get().get_change_message() == "没有字段被修改。"
