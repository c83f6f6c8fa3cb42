"""Two operators save a bad case that has no review yet, each a different field: both
fields survive, whether the saves come one after the other or at the same moment."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from feedback.models import BadCaseReview, ReviewTag
from feedback.services import bad_case_review_update
from tests.admin_pages import member_of
from tests.factories import DiagnosisSessionFactory
from tests.test_admin_bad_case_concurrent_edit import opened, save

pytestmark = pytest.mark.django_db

# Two pages' changes, each of fields the other leaves alone.
PAIRS = {
    "state then note": ({"review_state": "triaged"}, {"review_note": "index stale"}),
    "note then state": ({"review_note": "index stale"}, {"review_state": "resolved"}),
    "state then assignee": ({"review_state": "triaged"}, {"review_assignee": "colleague"}),
    "assignee then note": ({"review_assignee": "colleague"}, {"review_note": "index stale"}),
    "tags then state": ({"review_tags": "dns"}, {"review_state": "resolved"}),
}


def stored(session_id: str) -> dict[str, object]:
    review = BadCaseReview.objects.get(session_id=session_id)
    return {
        "review_state": review.state,
        "review_note": review.note,
        "review_assignee": review.assignee,
        "review_tags": list(review.tags.all()),
    }


@pytest.mark.parametrize("pair", PAIRS.values(), ids=PAIRS.keys())
def test_two_first_saves_from_pages_opened_before_either_keep_both_fields(
    admin_client, pair
) -> None:
    reviewer = member_of("reviewer", "ops.li")
    colleague = member_of("reviewer", "ops.wang").user  # type: ignore[attr-defined]
    dns = ReviewTag.objects.create(name="dns")
    posted = {"colleague": colleague.pk, "dns": [dns.pk]}
    expected = {"colleague": colleague, "dns": [dns]}
    session = DiagnosisSessionFactory(not_useful=True)
    seen_by_admin, seen_by_reviewer = opened(admin_client, session), opened(reviewer, session)
    first, second = pair

    save(admin_client, session, seen_by_admin, **{k: posted.get(v, v) for k, v in first.items()})
    save(reviewer, session, seen_by_reviewer, **{k: posted.get(v, v) for k, v in second.items()})

    now = stored(session.session_id)
    for name, value in {**first, **second}.items():
        assert now[name] == expected.get(value, value), name


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_two_first_saves_at_the_same_moment_keep_both_fields() -> None:
    colleague = get_user_model().objects.create_user("ops.wang", is_staff=True)
    ids = [f"bad-{n}" for n in range(200)]
    for session_id in ids:
        DiagnosisSessionFactory(session_id=session_id, not_useful=True)
    changes = [
        ({"state": "triaged"}, {"note": "index stale"}),
        ({"note": "index stale"}, {"assignee": colleague}),
        ({"state": "triaged"}, {"assignee": colleague}),
    ]
    barrier = threading.Barrier(2)

    def edit(side: int) -> None:
        try:
            barrier.wait(timeout=30)
            for n, session_id in enumerate(ids):
                bad_case_review_update(
                    session_id=session_id,
                    changed=changes[n % len(changes)][side],
                    reviewer=f"ops.{side}",
                )
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(edit, [0, 1]))

    lost = []
    for n, session_id in enumerate(ids):
        review = BadCaseReview.objects.get(session_id=session_id)
        for name, value in {**changes[n % len(changes)][0], **changes[n % len(changes)][1]}.items():
            if getattr(review, name) != value:
                lost.append((session_id, name))
    assert lost == []
