"""The bad-case review shows what readers said, and turns a correction into a case."""

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.utils.html import strip_tags

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FeedbackEntryFactory,
)
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/feedback/badcase/"
CASES = "/admin/caselibrary/caselibrary/"


def create_case(client, *sessions):  # type: ignore[no-untyped-def]
    return client.post(
        LIST,
        {
            "action": "create_case_from_correction",
            "_selected_action": [s.pk for s in sessions],
            "index": 0,
        },
        follow=True,
    )


def test_the_review_page_shows_reason_comment_and_correction_newest_first(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)
    FeedbackEntryFactory(session=session, reason="outdated", comment="早先的评论", correction="")
    FeedbackEntryFactory(session=session, correction="主从延迟，不是连接池")

    page = text(admin_client.get(f"{LIST}{session.pk}/change/"))

    assert "What readers said" in page
    assert "Wrong root cause" in page and "Outdated" in page
    assert "主从延迟，不是连接池" in page and "早先的评论" in page
    assert page.index("主从延迟，不是连接池") < page.index("早先的评论")
    assert "Feedback token" in page


def test_a_multi_line_correction_and_comment_keep_their_line_breaks_escaped(
    admin_client,
) -> None:
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)
    FeedbackEntryFactory(
        session=session,
        comment="第一行\n<b>第二行</b>",
        correction="根因：主从延迟\n1. 切回主库读\n2. <script>alert(1)</script>",
    )

    html = admin_client.get(f"{LIST}{session.pk}/change/").content.decode()

    assert (
        '<td class="feedback-correction">根因：主从延迟<br>1. 切回主库读<br>'
        "2. &lt;script&gt;alert(1)&lt;/script&gt;</td>"
    ) in html
    assert '<td class="feedback-comment">第一行<br>&lt;b&gt;第二行&lt;/b&gt;</td>' in html
    assert "<script>alert(1)" not in html


def test_a_bad_case_without_words_says_so(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)

    page = text(admin_client.get(f"{LIST}{session.pk}/change/"))

    assert "no reason, comment or correction given" in page


def test_create_case_from_correction_makes_a_manual_case_linked_to_the_session(
    admin_client,
) -> None:
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True, query="主库 QPS 暴涨")
    FeedbackEntryFactory(session=session, correction="旧的更正")
    FeedbackEntryFactory(session=session, correction="  慢查询打满了主库，加索引  ")

    page = text(create_case(admin_client, session))

    case = CaseLibrary.objects.get()
    assert "1 case created from a correction: “\u2068主库 QPS 暴涨\u2069”." in strip_tags(page)
    assert (case.source_type, case.diagnosis_id, case.title, case.root_cause) == (
        "MANUAL",
        "bad-1",
        "主库 QPS 暴涨",
        "慢查询打满了主库，加索引",
    )
    assert case.created_by == "admin"


def test_a_session_without_a_correction_or_with_a_case_is_reported_not_changed(
    admin_client,
) -> None:
    silent = DiagnosisSessionFactory(session_id="bad-silent", not_useful=True)
    FeedbackEntryFactory(session=silent, correction="")
    cased = DiagnosisSessionFactory(session_id="bad-cased", not_useful=True)
    FeedbackEntryFactory(session=cased)
    CaseLibraryFactory(diagnosis_id="bad-cased")

    page = text(create_case(admin_client, silent, cased))

    assert "No reader sent a correction for this session. (bad-silent)" in page
    assert "This session already has a case: edit that case instead. (bad-cased)" in page
    assert CaseLibrary.objects.count() == 1


def test_a_failed_session_without_an_answer_becomes_a_case_of_its_readers_correction(
    admin_client,
) -> None:
    session = DiagnosisSessionFactory(
        session_id="bad-failed",
        not_useful=True,
        status="FAILED",
        answer=None,
        query="支付回调大量超时",
    )
    FeedbackEntryFactory(session=session, correction="回调队列积压，扩容消费者")

    page = text(create_case(admin_client, session))

    case = CaseLibrary.objects.get()
    assert "1 case created from a correction" in strip_tags(page)
    assert (case.diagnosis_id, case.root_cause) == ("bad-failed", "回调队列积压，扩容消费者")


def test_a_session_that_cannot_become_a_case_is_reported_and_the_others_are_made(
    admin_client,
) -> None:
    first = DiagnosisSessionFactory(session_id="bad-a", not_useful=True, query="第一个")
    FeedbackEntryFactory(session=first, correction="更正一")
    # Rated, then reported as running again by SQL (an adopted database may hold one).
    running = DiagnosisSessionFactory(session_id="bad-running", not_useful=True)
    FeedbackEntryFactory(session=running, correction="更正二")
    DiagnosisSession.objects.filter(pk=running.pk).update(status="RUNNING", answer=None)

    response = create_case(admin_client, first, running)

    assert response.status_code == 200
    page = text(response)
    assert "1 case created from a correction" in strip_tags(page)
    assert "bad-running" in page
    assert list(CaseLibrary.objects.values_list("diagnosis_id", flat=True)) == ["bad-a"]


def test_the_message_links_the_case_made_from_the_correction(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True, query="主库 <QPS> 暴涨")
    FeedbackEntryFactory(session=session)

    html = create_case(admin_client, session).content.decode()

    case = CaseLibrary.objects.get()
    assert (
        f'1 case created from a correction: “<a href="{CASES}{case.pk}/change/">'
        "\u2068主库 &lt;QPS&gt; 暴涨\u2069</a>”."
    ) in html


def test_cases_made_from_several_corrections_are_each_linked(admin_client) -> None:
    sessions = [
        DiagnosisSessionFactory(session_id=f"bad-{n}", not_useful=True, query=f"问题 {n}")
        for n in (1, 2)
    ]
    for session in sessions:
        FeedbackEntryFactory(session=session)

    page = create_case(admin_client, *sessions).content.decode()

    links = [
        f'“<a href="{CASES}{case.pk}/change/">\u2068{case.title}\u2069</a>”'
        for case in CaseLibrary.objects.order_by("diagnosis_id")
    ]
    assert "2 cases created from corrections: " in page
    assert all(link in page for link in links) and len(links) == 2


def test_a_refusal_for_a_session_with_a_case_links_that_case(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="bad-cased", not_useful=True)
    FeedbackEntryFactory(session=session)
    case = CaseLibraryFactory(diagnosis_id="bad-cased", title="已有的案例")

    html = create_case(admin_client, session).content.decode()

    assert (
        "This session already has a case: edit that case instead. (bad-cased) "
        f'“<a href="{CASES}{case.pk}/change/">\u2068已有的案例\u2069</a>”'
    ) in html


def test_a_case_made_from_a_correction_has_an_addition_in_its_history(db) -> None:
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)
    FeedbackEntryFactory(session=session)
    curator = get_user_model().objects.create_user("ops.curator", is_staff=True)
    curator.groups.add(Group.objects.get(name="curator"))
    client = Client()
    client.force_login(curator)

    create_case(client, session)

    case = CaseLibrary.objects.get()
    entries = LogEntry.objects.filter(object_id=case.pk)
    assert [(e.action_flag, e.user, e.get_change_message()) for e in entries] == [
        (ADDITION, curator, "Added.")
    ]
    assert "Added." in text(client.get(f"{CASES}{case.pk}/history/"))


def test_only_staff_who_may_add_cases_see_the_action(db) -> None:
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)
    FeedbackEntryFactory(session=session)
    user = get_user_model().objects.create_user("ops.reader", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(codename__in=["view_badcase", "change_badcase"])
    )
    client = Client()
    client.force_login(user)

    assert "create_case_from_correction" not in client.get(LIST).content.decode()
    create_case(client, session)
    assert not CaseLibrary.objects.exists()

    user.user_permissions.add(Permission.objects.get(codename="add_caselibrary"))
    assert "create_case_from_correction" in client.get(LIST).content.decode()


def test_the_review_speaks_chinese_by_default(admin_client, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)
    FeedbackEntryFactory(session=session, reason="not_actionable")

    page = text(admin_client.get(f"{LIST}{session.pk}/change/"))

    assert "用户反馈的内容" in page and "无法执行" in page and "反馈令牌" in page
    assert "用用户的更正创建案例" in text(admin_client.get(LIST))
