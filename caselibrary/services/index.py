"""The search index: asking for a rebuild, claiming it, building it."""

import logging
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_q.tasks import async_task

from caselibrary.models import CaseIndexState, CaseLibrary
from caselibrary.search_index import BuildResult, CaseText, build
from caselibrary.services.proposals import cases_structure_new

logger = logging.getLogger(__name__)

INDEX_BATCH = 5_000
# The rebuild task, by name: the tasks module imports this one.
INDEX_TASK = "caselibrary.tasks.case_index_rebuild_task"
INDEX_GROUP = "case-index"


def case_index_request_rebuild() -> None:
    """Ask for the search index to be rebuilt, after the current transaction commits.

    Only the change that finds no rebuild pending enqueues one; a change made while a
    rebuild runs asks again, and that rebuild builds once more when it finishes.
    """
    transaction.on_commit(_request_rebuild, robust=True)


def _request_rebuild() -> None:
    # One UPDATE, the whole cost of a change while a rebuild is pending. The state row is
    # made by a migration; were it deleted, the minute's outcome sweep makes it again and
    # asks for the rebuild of the cases made meanwhile.
    asked = CaseIndexState.objects.filter(id=1, requested_at__isnull=True).update(
        requested_at=timezone.now()
    )
    if asked:
        async_task(INDEX_TASK, group=INDEX_GROUP, timeout=settings.CASE_INDEX_BUILD_TIMEOUT)


def case_index_rebuild() -> BuildResult | None:
    """Rebuild the search index if a rebuild is due and no other process is building.

    The body of the rebuild task. It claims the build with a conditional UPDATE, clears
    the request and builds; a change made while it builds asks again and is built in
    the same call, so a burst of changes costs at most two builds. None when another
    process holds the build (it sees the request when it finishes).
    """
    result = None
    while True:
        if not CaseIndexState.objects.filter(id=1, requested_at__isnull=False).exists():
            return result
        if not _claim_build():
            return result
        try:
            CaseIndexState.objects.filter(id=1).update(requested_at=None)
            result = _build_now()
        finally:
            CaseIndexState.objects.filter(id=1).update(building_since=None)


def case_index_build() -> BuildResult:
    """Build the index now, whatever was asked (the `case_index --build` command)."""
    if not _claim_build():
        raise ValidationError("Another process is building the case index right now.")
    try:
        CaseIndexState.objects.filter(id=1).update(requested_at=None)
        return _build_now()
    finally:
        CaseIndexState.objects.filter(id=1).update(building_since=None)


def _claim_build() -> bool:
    CaseIndexState.objects.get_or_create(id=1)
    now = timezone.now()
    stale = now - timedelta(seconds=settings.CASE_INDEX_BUILD_TIMEOUT)
    return bool(
        CaseIndexState.objects.filter(id=1)
        .filter(Q(building_since__isnull=True) | Q(building_since__lt=stale))
        .update(building_since=now)
    )


def _build_now() -> BuildResult:
    cases_structure_new()  # new cases' error codes are searched too
    result = build(_cases_in_key_order(), settings.CASE_INDEX_DIR)
    CaseIndexState.objects.filter(id=1).update(
        version=result.version,
        built_at=timezone.now(),
        cases=result.cases,
        build_seconds=round(result.seconds, 3),
    )
    logger.info(
        "case index built",
        extra={"version": result.version, "cases": result.cases, "seconds": result.seconds},
    )
    return result


def _cases_in_key_order() -> Iterator[CaseText]:
    # Keyset batches: a million cases never sit in memory as rows at once, and the order
    # (case_id) is the same on every database, so ties rank the same everywhere.
    last = ""
    while True:
        batch = list(
            CaseLibrary.objects.filter(case_id__gt=last)
            .order_by("case_id")
            .values_list("case_id", "title", "root_cause", "solution", "error_code")[:INDEX_BATCH]
        )
        if not batch:
            return
        for case_id, title, root_cause, solution, error_code in batch:
            yield CaseText(case_id, title, root_cause or "", solution or "", error_code)
        last = batch[-1][0]


def case_index_record_findability(*, report: dict[str, Any]) -> None:
    CaseIndexState.objects.get_or_create(id=1)
    CaseIndexState.objects.filter(id=1).update(findability=report)
