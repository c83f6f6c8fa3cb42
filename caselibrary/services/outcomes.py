"""What the sessions that found a case made of it: its reuse outcome counts."""

from collections.abc import Collection
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from caselibrary.models import CaseIndexState, CaseLibrary, CaseReuse, CaseSearchHit
from caselibrary.services.index import case_index_request
from caselibrary.services.proposals import cases_structure_new
from diagnosis.models import Feedback


def cases_outcomes_recount(*, case_ids: Collection[str]) -> int:
    """Set each case's useful / not useful session counts and its stale flag from the
    feedback of every session that found it (each session counted once)."""
    counts = {case_id: (0, 0) for case_id in case_ids}
    # One row per (case, session): a session that found a case twice counts once.
    rows = (
        CaseSearchHit.objects.filter(case_id__in=counts)
        .values_list("case_id", "session_id", "search__session__feedback")
        .distinct()
    )
    for case_id, _session_id, value in rows:
        useful, not_useful = counts[case_id]
        counts[case_id] = (
            useful + (value == Feedback.USEFUL),
            not_useful + (value == Feedback.NOT_USEFUL),
        )
    existing = set(CaseLibrary.objects.filter(case_id__in=counts).values_list("case_id", flat=True))
    with transaction.atomic():
        CaseReuse.objects.bulk_create(
            [CaseReuse(case_id=i) for i in sorted(existing)], ignore_conflicts=True
        )
        for case_id in sorted(existing):
            useful, not_useful = counts[case_id]
            CaseReuse.objects.filter(case_id=case_id).update(
                sessions_useful=useful,
                sessions_not_useful=not_useful,
                stale=is_stale(useful=useful, not_useful=not_useful),
            )
    return len(existing)


def is_stale(*, useful: int, not_useful: int) -> bool:
    """Found often enough to judge, and rated not useful more often than useful."""
    return useful + not_useful >= settings.CASE_STALE_MIN_RATED and not_useful > useful


# The case library's periodic bookkeeping reads searches made in this many days.
OUTCOME_WINDOW_DAYS = 7


def case_outcomes_sweep() -> int:
    """Recount the reuse outcomes of the cases found by sessions rated since the last
    sweep (a scheduled task, once a minute; the feedback request itself does nothing
    for it). Reads the searches of the last OUTCOME_WINDOW_DAYS off their created_at
    index and joins their sessions by key. Returns how many cases were recounted."""
    state = CaseIndexState.objects.get_or_create(id=1)[0]
    started = timezone.now()
    since = state.outcomes_swept_at or started - timedelta(days=OUTCOME_WINDOW_DAYS)
    case_ids = sorted(
        set(
            CaseSearchHit.objects.filter(
                search__created_at__gte=started - timedelta(days=OUTCOME_WINDOW_DAYS),
                search__session__feedback_at__gte=since - timedelta(seconds=5),
            ).values_list("case_id", flat=True)
        )
    )
    recounted = cases_outcomes_recount(case_ids=case_ids) if case_ids else 0
    CaseIndexState.objects.filter(id=1).update(outcomes_swept_at=started)
    # A case whose rebuild request was lost (a killed worker) is structured here.
    if cases_structure_new():
        case_index_request()
    return recounted
