"""Two reviewers' bulk actions on the same bad cases at the same moment, on MariaDB: both
are applied, neither fails."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from feedback.models import BadCaseReview
from feedback.review_queues import bad_cases_assign, bad_cases_tag
from tests.factories import BadCaseReviewFactory

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]

CASES = 300
ROUNDS = 6


def _at_once(*calls: Callable[[], object]) -> list[object]:
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], object]) -> object:
        try:
            barrier.wait(timeout=30)
            return call()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


def reviewer_named(username: str):  # type: ignore[no-untyped-def]
    # Not through the staff groups: a transaction test's flush leaves none after the first.
    return get_user_model().objects.create_user(username, is_staff=True)


@pytest.fixture
def queue() -> list[str]:
    return [BadCaseReviewFactory().session_id for _ in range(CASES)]


def test_two_reviewers_assigning_the_same_bad_cases_at_once_both_succeed(queue) -> None:
    li, wang = reviewer_named("ops.li"), reviewer_named("ops.wang")

    def assigns(user) -> Callable[[], int]:  # type: ignore[no-untyped-def]
        return lambda: sum(
            len(bad_cases_assign(session_ids=queue, assignee=user)) for _ in range(ROUNDS)
        )

    _at_once(assigns(li), assigns(wang), assigns(li), assigns(wang))

    assignees = set(BadCaseReview.objects.values_list("assignee__username", flat=True))
    assert len(assignees) == 1 and assignees <= {"ops.li", "ops.wang"}


def test_reviewers_tagging_and_assigning_the_same_bad_cases_at_once_keep_both(queue) -> None:
    li = reviewer_named("ops.li")

    def tags(name: str) -> Callable[[], int]:
        return lambda: len(bad_cases_tag(session_ids=queue, tag=name))

    def assigns() -> int:
        return sum(len(bad_cases_assign(session_ids=queue, assignee=li)) for _ in range(ROUNDS))

    _at_once(tags("db"), tags("db"), assigns, tags("network"))

    for review in BadCaseReview.objects.prefetch_related("tags"):
        assert review.assignee == li
        assert {t.name for t in review.tags.all()} == {"db", "network"}
