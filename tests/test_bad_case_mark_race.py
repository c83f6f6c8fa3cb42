"""Two operators mark the same bad cases at the same moment: what each is told it changed
adds up to what changed."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from feedback.models import BadCaseReview
from feedback.services import bad_cases_mark
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.mysql, pytest.mark.django_db(transaction=True)]


def test_two_operators_marking_the_same_cases_are_told_only_what_each_changed() -> None:
    ids = [f"bad-{n}" for n in range(300)]
    for session_id in ids:
        DiagnosisSessionFactory(session_id=session_id, succeeded=True, feedback="not_useful")
    barrier = threading.Barrier(2)

    def mark(reviewer: str) -> int:
        try:
            barrier.wait(timeout=30)
            return bad_cases_mark(session_ids=ids, state="triaged", reviewer=reviewer)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=2) as pool:
        told = list(pool.map(mark, ["ops.li", "ops.wang"]))

    assert sum(told) == len(ids) == BadCaseReview.objects.filter(state="triaged").count()
