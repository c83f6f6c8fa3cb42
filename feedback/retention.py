"""Services of session retention: old sessions nobody rated and no case came from are
removed, with their facts (tool invocations, case searches), in short batches.

A session with feedback, or with a case, is history an operator may still need (the
bad-case queue, the attribution pages, the case's source): it stays, however old.
"""

import logging
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
    *, older_than: timedelta, dry_run: bool = False, batch: int = PURGE_BATCH
) -> PurgeResult:
    """Remove sessions created more than `older_than` ago that have no feedback and no
    case. Each batch is its own short transaction, which checks the rule again: a session
    rated or made a case meanwhile stays."""
    cutoff = timezone.now() - older_than
    if dry_run:
        return PurgeResult(_purgeable(cutoff).count(), cutoff.isoformat(), dry_run=True)
    removed = 0
    last_pk = 0
    while True:
        # Walk the primary key upwards: each batch is found by an index range, never by
        # re-reading rows an earlier batch kept.
        pks = list(
            _purgeable(cutoff)
            .filter(pk__gt=last_pk)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch]
        )
        if not pks:
            break
        last_pk = pks[-1]
        with transaction.atomic():
            _, per_model = _purgeable(cutoff).filter(pk__in=pks).delete()
        removed += per_model.get(DiagnosisSession._meta.label, 0)
    logger.info("sessions purged", extra={"sessions": removed, "cutoff": cutoff.isoformat()})
    return PurgeResult(removed, cutoff.isoformat(), dry_run=False)


def sessions_purge_scheduled() -> int | None:
    """The daily schedule's work: purge by SESSION_RETENTION_DAYS; None when unset."""
    days = settings.SESSION_RETENTION_DAYS
    if not days:
        return None
    return sessions_purge(older_than=timedelta(days=days)).sessions
