"""The bad-case admin: the not_useful work queue, its review, and bulk triage."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.utils import timezone

from diagnosis.models import DiagnosisSession
from feedback.models import BadCase, BadCaseReview
from tests.admin_pages import shown_ids
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory, ToolInvocationFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/feedback/badcase/"


def change_url(session: DiagnosisSession) -> str:
    return f"{LIST}{session.pk}/change/"


@pytest.fixture
def queue():  # type: ignore[no-untyped-def]
    """Bad cases in every review state, beside sessions that are not bad cases."""
    DiagnosisSessionFactory(session_id="ok-useful", useful=True, evidence_score=65)
    DiagnosisSessionFactory(session_id="ok-silent", succeeded=True, evidence_score=65)
    DiagnosisSessionFactory(session_id="ok-running")
    return {
        "new": DiagnosisSessionFactory(session_id="bad-new", not_useful=True, evidence_score=65),
        "new-row": BadCaseReviewFactory(
            session__session_id="bad-new-row", session__evidence_score=0, state="new"
        ).session,
        "triaged": BadCaseReviewFactory(
            session__session_id="bad-triaged", session__evidence_score=20, state="triaged"
        ).session,
        "resolved": BadCaseReviewFactory(
            session__session_id="bad-resolved", session__evidence_score=65, state="resolved"
        ).session,
        "pending": DiagnosisSessionFactory(session_id="bad-pending", not_useful=True),
    }


def test_the_bad_case_list_shows_only_not_useful_sessions(admin_client, queue) -> None:
    response = admin_client.get(LIST)

    assert response.status_code == 200
    assert set(shown_ids(response)) == {
        "bad-new",
        "bad-new-row",
        "bad-triaged",
        "bad-resolved",
        "bad-pending",
    }


def test_each_row_shows_score_review_state_and_reviewer_and_leads_to_the_session(
    admin_client, queue
) -> None:
    page = text(admin_client.get(LIST))

    assert '<span class="review-state review-triaged">Triaged</span>' in page
    assert '<span class="review-state review-new">New</span>' in page
    assert "ops.reviewer" in page
    assert 'class="score score-65"' in page
    session = queue["triaged"]
    assert f'href="/admin/feedback/badcase/{session.pk}/change/' in page
    detail = text(admin_client.get(f"{LIST}{session.pk}/change/"))
    assert f'href="/admin/diagnosis/diagnosissession/{session.pk}/change/"' in detail


@pytest.mark.parametrize("extra", [0, 25])
def test_the_list_runs_the_same_few_queries_however_many_rows(
    admin_client, django_assert_num_queries, queue, extra
) -> None:
    for _ in range(extra):
        BadCaseReviewFactory()

    # Django's session and user, the capped count, the page (reviews and assignees joined
    # in), the page's tags, the tag filter's choices, the action bar's staff users.
    with django_assert_num_queries(7):
        response = admin_client.get(LIST)

    assert len(shown_ids(response)) == 5 + extra


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("new", {"bad-new", "bad-new-row", "bad-pending"}),
        ("triaged", {"bad-triaged"}),
        ("resolved", {"bad-resolved"}),
        ("open", {"bad-new", "bad-new-row", "bad-pending", "bad-triaged"}),
    ],
)
def test_the_review_state_filter(admin_client, queue, state, expected) -> None:
    assert set(shown_ids(admin_client.get(LIST, {"review_state": state}))) == expected


@pytest.mark.parametrize(
    ("band", "expected"),
    [
        ("65+", {"bad-new", "bad-resolved"}),
        ("0", {"bad-new-row"}),
        ("1-39", {"bad-triaged"}),
        ("40-64", set()),
        ("pending", {"bad-pending"}),
    ],
)
def test_the_score_band_filter(admin_client, queue, band, expected) -> None:
    assert set(shown_ids(admin_client.get(LIST, {"score_band": band}))) == expected


def test_open_bad_cases_with_a_high_score_are_one_click_away(admin_client, queue) -> None:
    response = admin_client.get(LIST, {"review_state": "open", "score_band": "65+"})

    assert shown_ids(response) == ["bad-new"]


def test_triaged_and_resolved_cases_come_latest_review_first(admin_client) -> None:
    now = timezone.now()
    for name, created_days_ago, reviewed_days_ago in [
        ("reviewed-long-ago", 1, 9),
        ("reviewed-today", 8, 0),
        ("reviewed-last-week", 3, 7),
    ]:
        review = BadCaseReviewFactory(
            session__session_id=name,
            state="resolved",
            reviewed_at=now - timedelta(days=reviewed_days_ago),
        )
        DiagnosisSession.objects.filter(pk=review.session.pk).update(
            created_at=now - timedelta(days=created_days_ago)
        )

    assert shown_ids(admin_client.get(LIST, {"review_state": "resolved"})) == [
        "reviewed-today",
        "reviewed-last-week",
        "reviewed-long-ago",
    ]
    # A column the operator sorts by still wins (7: "created", after the checkbox column).
    assert shown_ids(admin_client.get(LIST, {"review_state": "resolved", "o": "7"})) == [
        "reviewed-today",
        "reviewed-last-week",
        "reviewed-long-ago",
    ]
    assert shown_ids(admin_client.get(LIST, {"review_state": "resolved", "o": "-7"})) == [
        "reviewed-long-ago",
        "reviewed-last-week",
        "reviewed-today",
    ]


def test_the_last_review_column_says_who_and_when(admin_client) -> None:
    BadCaseReviewFactory(
        reviewed_by="ops.alice",
        reviewed_at=datetime(2026, 3, 4, 5, 6, tzinfo=UTC),
    )
    DiagnosisSessionFactory(not_useful=True)

    page = text(admin_client.get(LIST))

    # The day above the time, as the columns beside it; Django's long form in its tooltip.
    assert '<span class="user-name">ops.alice</span>, <time' in page
    assert 'title="March 4, 2026, 5:06 a.m."><span>2026-03-04</span> <span>05:06</span>' in page
    assert 'title="ops.alice, March 4, 2026, 5:06 a.m."' in page
    assert "not reviewed yet" in page


def test_searching_a_session_id(admin_client, queue) -> None:
    assert shown_ids(admin_client.get(LIST, {"q": "bad-triaged"})) == ["bad-triaged"]
    # A session that is not a bad case is not found here, even by its id.
    assert shown_ids(admin_client.get(LIST, {"q": "ok-useful"})) == []


def test_a_session_that_is_not_a_bad_case_has_no_bad_case_page(admin_client, queue) -> None:
    useful = DiagnosisSession.objects.get(session_id="ok-useful")

    response = admin_client.get(change_url(useful))

    assert response.status_code == 302  # Django's "does not exist" back to the index


def test_the_review_page_shows_the_session_read_only_and_the_review_form(admin_client) -> None:
    session = DiagnosisSessionFactory(
        not_useful=True, query="why 504?", answer="第一行\n<b>第二行</b>", evidence_score=65
    )
    ToolInvocationFactory(session=session, tool_name="QueryLogs", query="<grep 504>")

    response = admin_client.get(change_url(session))

    page = text(response)
    form = response.context["adminform"].form
    assert set(form.fields) == {"review_state", "review_note", "review_assignee", "review_tags"}
    assert form["review_state"].value() == "new"
    assert "第一行<br>&lt;b&gt;第二行&lt;/b&gt;" in page
    assert "<td>QueryLogs</td>" in page and "&lt;grep 504&gt;" in page
    assert "not reviewed yet" in page
    assert f'href="/admin/diagnosis/diagnosissession/{session.pk}/change/"' in page


def test_marking_one_bad_case_triaged_with_a_note_records_who_and_when(admin_client) -> None:
    session = DiagnosisSessionFactory(not_useful=True)
    before = DiagnosisSession.objects.values().get(pk=session.pk)

    response = admin_client.post(
        change_url(session), {"review_state": "triaged", "review_note": "检索没有命中 runbook"}
    )

    assert response.status_code == 302
    review = BadCaseReview.objects.get()
    assert (review.session_id, review.state, review.note, review.reviewed_by) == (
        session.session_id,
        "triaged",
        "检索没有命中 runbook",
        "admin",
    )
    assert review.reviewed_at is not None
    assert DiagnosisSession.objects.values().get(pk=session.pk) == before  # session untouched
    entry = LogEntry.objects.get()
    assert (entry.action_flag, entry.object_id) == (CHANGE, str(session.pk))
    assert "review state" in entry.get_change_message().lower()


def test_saving_the_review_unchanged_writes_nothing(admin_client) -> None:
    session = DiagnosisSessionFactory(not_useful=True)

    admin_client.post(change_url(session), {"review_state": "new", "review_note": ""})

    assert not BadCaseReview.objects.exists()


def test_an_existing_review_is_updated_and_shown(admin_client) -> None:
    review = BadCaseReviewFactory(state="triaged", note="first look", reviewed_by="ops.li")
    url = change_url(review.session)

    assert admin_client.get(url).context["adminform"].form["review_note"].value() == "first look"
    admin_client.post(url, {"review_state": "resolved", "review_note": "fixed the index"})

    review.refresh_from_db()
    assert (review.state, review.note, review.reviewed_by) == (
        "resolved",
        "fixed the index",
        "admin",
    )


def test_an_unknown_review_state_is_a_form_error(admin_client) -> None:
    session = DiagnosisSessionFactory(not_useful=True)

    response = admin_client.post(change_url(session), {"review_state": "closed"})

    assert response.status_code == 200
    assert "review_state" in response.context["adminform"].form.errors
    assert not BadCaseReview.objects.exists()


def test_bad_cases_cannot_be_added_or_deleted(admin_client, queue) -> None:
    assert admin_client.get(f"{LIST}add/").status_code == 403
    assert admin_client.get(f"{LIST}{queue['new'].pk}/delete/").status_code == 403


def act(client, action: str, *sessions: DiagnosisSession):  # type: ignore[no-untyped-def]
    return client.post(
        LIST,
        {"action": action, "_selected_action": [s.pk for s in sessions], "index": 0},
        follow=True,
    )


def test_bulk_mark_triaged_reports_how_many_changed(admin_client, queue) -> None:
    response = act(admin_client, "mark_triaged", queue["new"], queue["new-row"], queue["triaged"])

    assert "2 bad cases marked Triaged." in text(response)
    states = dict(BadCaseReview.objects.values_list("session_id", "state"))
    assert states["bad-new"] == states["bad-new-row"] == states["bad-triaged"] == "triaged"
    # The case triaged before keeps who triaged it.
    assert BadCaseReview.objects.get(session_id="bad-triaged").reviewed_by == "ops.reviewer"
    assert BadCaseReview.objects.get(session_id="bad-new").reviewed_by == "admin"
    logged = set(LogEntry.objects.values_list("object_id", flat=True))
    assert logged == {str(queue["new"].pk), str(queue["new-row"].pk)}


def test_bulk_mark_resolved_keeps_the_notes(admin_client, queue) -> None:
    act(admin_client, "mark_resolved", queue["triaged"], queue["pending"])

    triaged = BadCaseReview.objects.get(session_id="bad-triaged")
    assert (triaged.state, triaged.note, triaged.reviewed_by) == (
        "resolved",
        "looked at it",
        "admin",
    )
    assert BadCaseReview.objects.get(session_id="bad-pending").state == "resolved"


def test_the_review_lives_outside_diagnosis_session(admin_client, queue) -> None:
    columns = {f.column for f in DiagnosisSession._meta.concrete_fields}

    act(admin_client, "mark_resolved", queue["new"])

    assert BadCaseReview._meta.db_table == "bad_case_review"
    assert not columns & {"state", "note", "reviewed_by", "reviewed_at"}
    assert BadCase._meta.proxy


def test_anonymous_and_non_staff_cannot_reach_the_bad_cases(client, user_client, queue) -> None:
    for visitor in (client, user_client):
        for url in (LIST, change_url(queue["new"])):
            response = visitor.get(url)
            assert response.status_code == 302
            assert response.url.startswith("/admin/login/")
    assert client.post(change_url(queue["new"]), {"review_state": "resolved"}).status_code == 302
    assert not BadCaseReview.objects.filter(session_id="bad-new").exists()


def test_staff_without_permission_cannot_review(staff_client, queue) -> None:
    assert staff_client.get(LIST).status_code == 403
    response = staff_client.post(change_url(queue["new"]), {"review_state": "resolved"})
    assert response.status_code == 403


def test_staff_who_may_only_view_see_the_review_read_only(staff_client) -> None:
    from django.contrib.auth.models import Permission, User

    User.objects.get(username="ops.staff").user_permissions.add(
        Permission.objects.get(codename="view_badcase")
    )
    review = BadCaseReviewFactory(state="triaged", note="checked the runbook")

    response = staff_client.get(change_url(review.session))

    assert response.status_code == 200
    page = text(response)
    assert "Triaged" in page and "checked the runbook" in page
    assert 'name="review_state"' not in page
    assert (
        staff_client.post(change_url(review.session), {"review_state": "resolved"}).status_code
        == 403
    )
    assert 'name="action"' not in staff_client.get(LIST).content.decode()


def test_the_review_page_runs_a_fixed_number_of_queries(
    admin_client, django_assert_num_queries
) -> None:
    review = BadCaseReviewFactory()
    ToolInvocationFactory.create_batch(40, session=review.session)

    # Django's session and user, the bad case with its review and assignee, its tags,
    # its invocations, what readers said with their feedback, the staff users and the
    # tags to choose from.
    with django_assert_num_queries(8):
        admin_client.get(change_url(review.session))
