"""A session's page shows what readers said with their feedback (reasons, comments,
corrections), as the bad-case page does: a session rated useful after not_useful leaves
the bad-case queue, and its earlier reader's words stay in view."""

from datetime import timedelta

import pytest
from django.utils import timezone

from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEntry
from tests.admin_pages import member_of
from tests.factories import DiagnosisSessionFactory, FeedbackEntryFactory

pytestmark = pytest.mark.django_db

SESSIONS = "/admin/diagnosis/diagnosissession/"


def page_of(client, session: DiagnosisSession) -> str:  # type: ignore[no-untyped-def]
    response = client.get(f"{SESSIONS}{session.pk}/change/")
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


@pytest.fixture
def flipped() -> DiagnosisSession:
    """Rated not_useful with a comment and a correction, then useful with a comment."""
    session = DiagnosisSessionFactory(session_id="flip-1", useful=True)
    earlier = FeedbackEntryFactory(
        session=session,
        feedback="not_useful",
        reason="wrong_root_cause",
        comment="根因判断错了",
        correction="主从延迟导致读到旧数据",
        channel="token",
    )
    FeedbackEntryFactory(
        session=session,
        feedback="useful",
        reason="",
        comment="刷新后再看，答案是对的",
        correction="",
        channel="api_key",
    )
    # The earlier one an hour before, whatever the clock gave both.
    FeedbackEntry.objects.filter(pk=earlier.pk).update(
        created_at=timezone.now() - timedelta(hours=1)
    )
    return session


@pytest.mark.usefixtures("admin_in_english")
@pytest.mark.parametrize("who", ["reviewer", "superuser"])
def test_a_sessions_page_shows_what_readers_said_newest_first(who, flipped, admin_client) -> None:
    client = admin_client if who == "superuser" else member_of(who)

    page = page_of(client, flipped)

    assert "What readers said" in page
    assert "Wrong root cause" in page
    assert "根因判断错了" in page and "主从延迟导致读到旧数据" in page
    assert page.index("刷新后再看，答案是对的") < page.index("根因判断错了")
    assert "Feedback token" in page and "API key" in page
    assert page.index("Not useful") > page.index("刷新后再看，答案是对的")


def test_a_sessions_page_shows_what_readers_said_in_chinese(flipped, admin_client) -> None:
    page = page_of(admin_client, flipped)

    assert "用户反馈的内容" in page
    assert "原因、说明与更正" in page
    assert "凭据" in page and "反馈令牌" in page
    assert "根因判断错了" in page


@pytest.mark.usefixtures("admin_in_english")
def test_a_readers_words_on_a_sessions_page_are_escaped_and_keep_their_line_breaks(
    admin_client,
) -> None:
    session = DiagnosisSessionFactory(session_id="flip-2", not_useful=True)
    FeedbackEntryFactory(
        session=session, comment="第一行\n<b>第二行</b>", correction="<script>alert(1)</script>"
    )

    html = admin_client.get(f"{SESSIONS}{session.pk}/change/").content.decode()

    assert '<td class="feedback-comment">第一行<br>&lt;b&gt;第二行&lt;/b&gt;</td>' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)" not in html


@pytest.mark.usefixtures("admin_in_english")
def test_a_session_no_reader_said_anything_about_says_so(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="flip-3", useful=True)

    page = page_of(admin_client, session)

    assert "What readers said" in page
    assert "no reason, comment or correction given" in page


def test_staff_who_may_not_view_sessions_do_not_see_what_readers_said(
    flipped, staff_client
) -> None:
    response = staff_client.get(f"{SESSIONS}{flipped.pk}/change/")

    assert response.status_code == 403
    assert "根因判断错了" not in response.content.decode()
