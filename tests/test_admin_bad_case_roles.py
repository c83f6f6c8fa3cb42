"""The bad-case list as each staff group sees it: the action bar's inputs beside the
actions that read them, and the "confident but wrong" mark on the queue to work first."""

import re

import pytest
from django.test import Client

from feedback.models import BadCaseReview, ReviewState
from tests.admin_pages import member_of, reviewer_named
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory, FeedbackEntryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

BAD_CASES = "/admin/feedback/badcase/"


def action_bar(client: Client) -> str:
    page = client.get(BAD_CASES).content.decode()
    found = re.search(r'<div class="actions">.*?</div>', page, re.S)
    return found.group(0) if found else ""


def confident_marks(page: str) -> dict[str, bool]:
    """Each row's session id, and whether its score is marked confident but wrong."""
    rows = re.findall(r"<tr>(.*?)</tr>", page.split('id="result_list"', 1)[-1], re.S)
    marks = {}
    for row in rows:
        session = re.search(r'class="field-session_id"><a [^>]*>([^<]+)</a>', row)
        if session:
            marks[session.group(1)] = 'class="confident-but-wrong"' in row
    return marks


@pytest.fixture
def bad_case():  # type: ignore[no-untyped-def]
    session = DiagnosisSessionFactory(session_id="bad-1", not_useful=True)
    FeedbackEntryFactory(session=session)
    return session


def test_a_curator_sees_no_assignee_select_or_tag_input(bad_case) -> None:
    bar = action_bar(member_of("curator"))

    assert 'value="create_case_from_correction"' in bar
    assert 'name="assignee"' not in bar and "Assign to" not in bar
    assert 'name="tag"' not in bar and "Tag:" not in bar


def test_a_reviewer_sees_the_assignee_select_and_the_tag_input(bad_case) -> None:
    bar = action_bar(member_of("reviewer"))

    assert 'value="assign_to_chosen"' in bar and 'name="assignee"' in bar
    assert 'value="add_tag"' in bar and 'name="tag"' in bar


def test_a_superuser_sees_both_inputs(admin_client, bad_case) -> None:
    bar = action_bar(admin_client)

    assert 'name="assignee"' in bar and 'name="tag"' in bar


def test_a_reviewer_still_assigns_to_a_chosen_colleague_and_tags(bad_case) -> None:
    colleague = reviewer_named("ops.colleague")
    reviewer = member_of("reviewer")
    for data in ({"action": "assign_to_chosen", "assignee": colleague.pk}, {"action": "add_tag"}):
        data.update({"_selected_action": [bad_case.pk], "index": 0, "tag": "needs-runbook"})
        reviewer.post(BAD_CASES, data)

    review = BadCaseReview.objects.get()
    assert review.assignee == colleague
    assert [tag.name for tag in review.tags.all()] == ["needs-runbook"]


def test_only_open_bad_cases_scored_65_or_more_are_marked_confident_but_wrong(
    admin_client,
) -> None:
    DiagnosisSessionFactory(session_id="new-65", not_useful=True, evidence_score=65)
    for state in ReviewState.values:
        BadCaseReviewFactory(
            session__session_id=f"{state}-row-65", session__evidence_score=65, state=state
        )
    BadCaseReviewFactory(
        session__session_id="triaged-row-64", session__evidence_score=64, state="triaged"
    )

    marks = confident_marks(admin_client.get(BAD_CASES).content.decode())

    assert marks == {
        "new-65": True,
        "new-row-65": True,
        "triaged-row-65": True,
        "resolved-row-65": False,
        "triaged-row-64": False,
    }
