"""The admin lists at scale. Bulk actions on "select all": the statements an action sends
do not grow with the number of rows it acts on (up to a batch of 1,000), and what the
operator sees and the history keeps stay the same, one entry per row. Sorting: the lists
offer the sorts an index answers, in either direction, and no other."""

import re
from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession
from feedback.models import BadCaseReview, ReviewState
from tests.admin_pages import shown_ids
from tests.factories import (
    BadCaseReviewFactory,
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FaultCategoryFactory,
)
from tests.page_text import visible_text as text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

BAD_CASES = "/admin/feedback/badcase/"
SESSIONS = "/admin/diagnosis/diagnosissession/"
CASES = "/admin/caselibrary/caselibrary/"
# The statements of one "select all" action on up to a batch of rows: the request's own
# (session, user, the list's count and page), then each kind of write once. Ten times
# the rows may split an insert into a few statements on SQLite (999 values each), never
# one statement per row.
CEILING = 30


def bad_cases(count: int) -> list[DiagnosisSession]:
    return DiagnosisSession.objects.bulk_create(
        DiagnosisSessionFactory.build_batch(count, not_useful=True)
    )


def select_all(client, url: str, action: str, **extra: object):  # type: ignore[no-untyped-def]
    """The header checkbox, then "Select all": the action's request, its statements
    counted, then the page it leads to."""
    page = client.get(url)
    on_page = [obj.pk for obj in page.context["cl"].result_list]
    data = {
        "action": action,
        "_selected_action": on_page,
        "select_across": "1",
        "index": 0,
        **extra,
    }
    with CaptureQueriesContext(connection) as statements:
        response = client.post(url, data)
    assert response.status_code == 302
    return len(statements), client.get(response["Location"])


@pytest.mark.parametrize("count", [20, 200])
def test_marking_every_new_bad_case_triaged_takes_the_same_few_statements_for_20_or_200(
    admin_client, admin_user, count
) -> None:
    sessions = bad_cases(count)

    statements, page = select_all(admin_client, BAD_CASES, "mark_triaged")

    assert statements <= CEILING
    assert f"{count} bad cases marked Triaged." in text(page)
    assert BadCaseReview.objects.filter(state=ReviewState.TRIAGED).count() == count
    history = LogEntry.objects.filter(user=admin_user, action_flag=CHANGE)
    assert sorted(history.values_list("object_repr", flat=True)) == sorted(
        s.session_id for s in sessions
    )
    assert {entry.get_change_message() for entry in history} == {"Changed Review state."}


@pytest.mark.parametrize("count", [20, 200])
def test_resolving_a_mix_of_new_and_triaged_bad_cases_takes_the_same_few_statements(
    admin_client, admin_user, count
) -> None:
    bad_cases(count // 2)
    triaged = BadCaseReviewFactory.create_batch(count // 2, state=ReviewState.TRIAGED)
    done = BadCaseReviewFactory(state=ReviewState.RESOLVED, reviewed_by="ops.first")

    statements, page = select_all(admin_client, BAD_CASES, "mark_resolved")

    assert statements <= CEILING
    assert f"{count} bad cases marked Resolved." in text(page)
    resolved = BadCaseReview.objects.filter(state=ReviewState.RESOLVED)
    assert resolved.count() == count + 1
    assert set(resolved.exclude(pk=done.pk).values_list("reviewed_by", flat=True)) == {"admin"}
    # The one resolved already keeps who resolved it, and gets no history entry.
    done.refresh_from_db()
    assert done.reviewed_by == "ops.first"
    logged = set(LogEntry.objects.values_list("object_repr", flat=True))
    assert done.session_id not in logged
    assert {review.session_id for review in triaged} <= logged
    assert len(logged) == count


@pytest.mark.parametrize("count", [20, 200])
def test_setting_the_category_of_every_case_takes_the_same_few_statements_for_20_or_200(
    admin_client, admin_user, count
) -> None:
    FaultCategoryFactory(code="DATABASE")
    cases = CaseLibrary.objects.bulk_create(CaseLibraryFactory.build_batch(count))

    statements, page = select_all(admin_client, CASES, "set_category", fault_category="DATABASE")

    assert statements <= CEILING
    assert f"{count} cases filed under DATABASE." in text(page)
    assert CaseLibrary.objects.filter(fault_category="DATABASE").count() == count
    history = LogEntry.objects.filter(user=admin_user, action_flag=CHANGE)
    assert sorted(history.values_list("object_id", "object_repr")) == sorted(
        (case.pk, str(case)) for case in cases
    )
    assert {entry.get_change_message() for entry in history} == {"Changed Fault category."}


# --- Sorting -----------------------------------------------------------------------------


def sortable_columns(page) -> list[str]:  # type: ignore[no-untyped-def]
    return re.findall(r'<th scope="col" class="sortable column-(\w+)', page.content.decode())


def aged(session_id: str, days: int, **traits: object) -> DiagnosisSession:
    session = DiagnosisSessionFactory(session_id=session_id, **traits)
    then = timezone.now() - timedelta(days=days)
    DiagnosisSession.objects.filter(pk=session.pk).update(created_at=then, feedback_at=then)
    return session


def test_sessions_sorted_by_status_each_way_list_a_status_oldest_or_newest_first(
    admin_client,
) -> None:
    aged("failed-old", 3, failed=True)
    aged("failed-new", 1, failed=True)
    aged("success-old", 4, succeeded=True)
    aged("success-new", 2, succeeded=True)

    # 3: the status column, after the checkbox, the id and the question.
    ascending = shown_ids(admin_client.get(SESSIONS, {"o": "3"}))
    descending = shown_ids(admin_client.get(SESSIONS, {"o": "-3"}))

    assert ascending == ["failed-old", "failed-new", "success-old", "success-new"]
    assert descending == ["success-new", "success-old", "failed-new", "failed-old"]


def test_bad_cases_sorted_by_feedback_time_each_way(admin_client) -> None:
    for session_id, days in [("said-2", 2), ("said-1", 1), ("said-3", 3)]:
        aged(session_id, days, not_useful=True)

    # 6: "feedback at", after the checkbox, the id, the question, the score, the review
    # state and the last review.
    ascending = shown_ids(admin_client.get(BAD_CASES, {"o": "6"}))
    descending = shown_ids(admin_client.get(BAD_CASES, {"o": "-6"}))

    assert ascending == ["said-3", "said-2", "said-1"]
    assert descending == ["said-1", "said-2", "said-3"]
