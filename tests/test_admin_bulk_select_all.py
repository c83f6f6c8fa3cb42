""" "Select all" on lists longer than the paginator counts (config/admin_paginator.py):
every bulk action acts on every row the filters match, and the selection bar never
names the capped count as if it were the number selected."""

import re

import pytest

from config.admin_paginator import COUNT_CAP
from diagnosis.models import DiagnosisSession
from feedback.models import BadCaseReview, ReviewState
from tests.admin_pages import reviewer_named
from tests.factories import BadCaseReviewFactory, DiagnosisSessionFactory
from tests.page_text import visible_text as text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

BAD_CASES = "/admin/feedback/badcase/"
SESSIONS = "/admin/diagnosis/diagnosissession/"
# More than the paginator counts, and more than a service's batch (1,000 ids).
MANY = COUNT_CAP + 137
FEW_TRIAGED = 12


def make_sessions(count: int, **traits: object) -> list[DiagnosisSession]:
    return DiagnosisSession.objects.bulk_create(
        DiagnosisSessionFactory.build_batch(count, **traits)
    )


def select_all(client, url: str, action: str, query: str, **extra: object):  # type: ignore[no-untyped-def]
    """The header checkbox, then "Select all …": the page's boxes and select_across."""
    page = client.get(f"{url}?{query}")
    on_page = [obj.pk for obj in page.context["cl"].result_list]
    return client.post(
        f"{url}?{query}",
        {
            "action": action,
            "_selected_action": on_page,
            "select_across": "1",
            "index": 0,
            **extra,
        },
        follow=True,
    )


@pytest.fixture
def new_bad_cases(db) -> list[DiagnosisSession]:  # type: ignore[no-untyped-def]
    return make_sessions(MANY, not_useful=True)


@pytest.fixture
def triaged_bad_cases(db) -> list[BadCaseReview]:  # type: ignore[no-untyped-def]
    return BadCaseReviewFactory.create_batch(FEW_TRIAGED, state=ReviewState.TRIAGED)


def test_mark_triaged_on_all_new_bad_cases_marks_every_one_and_says_how_many(
    admin_client, new_bad_cases, triaged_bad_cases
) -> None:
    response = select_all(admin_client, BAD_CASES, "mark_triaged", "review_state=new")

    assert f"{MANY} bad cases marked Triaged." in text(response)
    assert BadCaseReview.objects.filter(state=ReviewState.TRIAGED).count() == MANY + FEW_TRIAGED


def test_add_tag_on_all_new_bad_cases_tags_every_one_of_them(
    admin_client, new_bad_cases, triaged_bad_cases
) -> None:
    response = select_all(admin_client, BAD_CASES, "add_tag", "review_state=new", tag="dns")

    assert f"{MANY} bad cases tagged dns." in text(response)
    tagged = BadCaseReview.objects.filter(tags__name="dns")
    assert tagged.count() == MANY
    # The filter is the selection: the triaged ones were not part of it.
    assert not tagged.filter(state=ReviewState.TRIAGED).exists()


def test_assign_to_me_on_all_triaged_bad_cases_assigns_every_one_of_them(
    admin_client, admin_user, new_bad_cases
) -> None:
    BadCaseReview.objects.bulk_create(
        [BadCaseReview(session_id=s.session_id, state=ReviewState.TRIAGED) for s in new_bad_cases]
    )
    fresh = DiagnosisSessionFactory(not_useful=True)

    response = select_all(admin_client, BAD_CASES, "assign_to_me", "review_state=triaged")

    assert f"{MANY} bad cases assigned to admin." in text(response)
    assert BadCaseReview.objects.filter(assignee=admin_user).count() == MANY
    assert not BadCaseReview.objects.filter(session_id=fresh.session_id).exists()


def test_assign_to_a_colleague_and_unassign_act_on_all_the_filter_matches(
    admin_client, new_bad_cases
) -> None:
    colleague = reviewer_named("ops.wang")

    assigned = select_all(
        admin_client, BAD_CASES, "assign_to_chosen", "review_state=new", assignee=colleague.pk
    )
    unassigned = select_all(admin_client, BAD_CASES, "unassign", "review_state=new")

    assert f"{MANY} bad cases assigned to ops.wang." in text(assigned)
    assert f"{MANY} bad cases unassigned." in text(unassigned)
    assert not BadCaseReview.objects.filter(assignee__isnull=False).exists()


def test_the_selection_bar_names_no_capped_count_as_the_number_selected(
    admin_client, new_bad_cases
) -> None:
    page = admin_client.get(BAD_CASES, {"review_state": "new"}).content.decode()

    bar = re.search(r'<span class="all hidden">(.*?)</span>', page, re.S)
    assert bar is not None
    assert f"{COUNT_CAP + 1}" not in bar.group(1)
    assert " ".join(bar.group(1).split()) == "All bad cases matching the filter selected"
    unfiltered = admin_client.get(BAD_CASES).content.decode()
    bar = re.search(r'<span class="all hidden">(.*?)</span>', unfiltered, re.S)
    assert bar is not None and " ".join(bar.group(1).split()) == "All bad cases selected"


def test_the_selection_bar_of_an_exactly_counted_list_shows_the_count(admin_client) -> None:
    make_sessions(30, not_useful=True)

    page = admin_client.get(BAD_CASES, {"review_state": "new"}).content.decode()

    # Thirty fit on one page: nothing to select across, no bar.
    assert '<span class="all hidden">' not in page
    make_sessions(40, not_useful=True)
    page = admin_client.get(BAD_CASES, {"review_state": "new"}).content.decode()
    bar = re.search(r'<span class="all hidden">(.*?)</span>', page, re.S)
    assert bar is not None and " ".join(bar.group(1).split()) == "All 70 selected"


def test_rescore_on_all_failed_sessions_queues_every_one_and_the_bar_says_no_capped_count(
    admin_client, django_capture_on_commit_callbacks
) -> None:
    make_sessions(MANY, failed=True)
    make_sessions(5, succeeded=True)

    page = admin_client.get(SESSIONS, {"status__exact": "FAILED"}).content.decode()
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = select_all(admin_client, SESSIONS, "rescore", "status__exact=FAILED")

    bar = re.search(r'<span class="all hidden">(.*?)</span>', page, re.S)
    assert bar is not None
    assert " ".join(bar.group(1).split()) == "All diagnosis sessions matching the filter selected"
    assert f"{MANY} sessions queued for rescoring." in text(response)
    assert len(queued) == -(-MANY // 500)
