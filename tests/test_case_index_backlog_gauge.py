"""`diagnosis_case_index_waiting_cases` at each scrape: the cases marked changed and not
indexed yet, counted exactly while few wait; past EXACT_UP_TO (a refill's whole library),
read from the change sequence instead, so that a scrape's cost does not grow with the
backlog."""

from __future__ import annotations

import pytest

from caselibrary.models import CaseChange
from caselibrary.search_backends.refill import EXACT_UP_TO, cases_waiting
from tests.metrics_samples import scrape, value

pytestmark = pytest.mark.django_db

WAITING = "diagnosis_case_index_waiting_cases"


def marked(*case_ids: str) -> None:
    CaseChange.objects.all().delete()
    CaseChange.objects.bulk_create(CaseChange(case_id=case_id) for case_id in case_ids)


def test_a_case_changed_three_times_waits_as_one_case() -> None:
    marked("a", "a", "a", "b")

    assert value(scrape(), WAITING) == 2


def test_a_backlog_past_the_exact_count_reads_as_the_changes_waiting() -> None:
    backlog = [f"case-{n}" for n in range(EXACT_UP_TO + 250)]
    marked(*backlog)

    assert value(scrape(), WAITING) == len(backlog)


def test_a_backlog_read_from_the_sequence_never_reads_as_fewer_cases_than_wait() -> None:
    backlog = [f"case-{n}" for n in range(EXACT_UP_TO + 10)]
    marked(*backlog, *backlog[:5])
    # The indexer took some changes from the middle of the sequence.
    CaseChange.objects.filter(case_id__in=backlog[100:110]).delete()

    assert cases_waiting() >= len(backlog) - 10


def test_an_empty_backlog_reads_zero() -> None:
    marked()

    assert cases_waiting() == 0
