"""Services of session retention: old sessions nobody rated and no case came from are
removed, with their facts (tool invocations, case searches), in short batches.

A session with feedback, or with a case, is history an operator may still need (the
bad-case queue, the attribution pages, the case's source): it stays, however old.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession

logger = logging.getLogger(__name__)

PURGE_BATCH = 500
# The oldest cut-off a purge takes: a century. Far beyond any retention, and far from the
# first day a date can hold (year 1), which an age of 800,000 days would pass.
# SESSION_RETENTION_DAYS has the same bound (config/settings.py).
MAX_AGE_DAYS = 36500


@dataclass(frozen=True)
class PurgeResult:
    sessions: int
    cutoff: str
    dry_run: bool


def _purgeable(cutoff: object) -> QuerySet:
    return DiagnosisSession.objects.filter(created_at__lt=cutoff, feedback__isnull=True).exclude(
        Exists(CaseLibrary.objects.filter(diagnosis_id=OuterRef("session_id")))
    )


def sessions_purge(
    *,
    older_than: timedelta,
    dry_run: bool = False,
    batch: int = PURGE_BATCH,
    progress: Callable[[int], None] | None = None,
) -> PurgeResult:
    """Remove sessions created more than `older_than` ago that have no feedback and no
    case. Each batch is its own short transaction, which locks its sessions and checks
    the rule again: a session rated or made a case meanwhile stays, and one rated while
    the batch is deleted is not found by the rating (404). `progress` is told the
    sessions removed so far after each batch commits."""
    cutoff = timezone.now() - older_than
    if dry_run:
        return PurgeResult(_purgeable(cutoff).count(), cutoff.isoformat(), dry_run=True)
    removed = 0
    last_pk = 0
    while True:
        # Walk the primary key upwards: each batch is found by an index range, never by
        # re-reading rows an earlier batch kept.
        found = list(
            _purgeable(cutoff)
            .filter(pk__gt=last_pk)
            .order_by("pk")
            .values_list("pk", "session_id")[:batch]
        )
        if not found:
            break
        last_pk = found[-1][0]
        with transaction.atomic():
            # The batch's sessions locked first, then the rule read again by a statement
            # of its own: a rating or a case written meanwhile is seen (it committed
            # before the lock was had) or waits for the delete (and finds no session).
            # Locked by session id, as ratings and cases lock a session: taken in the
            # same order (that index, then the row), the two never deadlock.
            locked = DiagnosisSession.objects.select_for_update().filter(
                session_id__in=[session_id for _, session_id in found]
            )
            locked = list(locked.values_list("pk", flat=True))
            _, per_model = _purgeable(cutoff).filter(pk__in=locked).delete()
        removed += per_model.get(DiagnosisSession._meta.label, 0)
        if progress:
            progress(removed)
    logger.info("sessions purged", extra={"sessions": removed, "cutoff": cutoff.isoformat()})
    return PurgeResult(removed, cutoff.isoformat(), dry_run=False)


def sessions_purge_scheduled() -> int | None:
    """The daily schedule's work: purge by SESSION_RETENTION_DAYS; None when unset."""
    days = settings.SESSION_RETENTION_DAYS
    if not days:
        return None
    return sessions_purge(older_than=timedelta(days=days)).sessions
