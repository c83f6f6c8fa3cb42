"""What the sessions that found a case made of it: its reuse outcome counts."""

from collections.abc import Collection
from datetime import timedelta

from django.utils import timezone

from caselibrary.models import CaseIndexState, CaseSearchHit
from caselibrary.services.duplicates import cases_reuse_counted, cases_reuse_write
from caselibrary.services.index import case_index_request
from caselibrary.services.proposals import cases_structure_new
from diagnosis.models import DiagnosisSession, Feedback


def cases_outcomes_recount(*, case_ids: Collection[str]) -> int:
    """Set each case's useful / not useful session counts and its stale flag from the
    feedback of every session that found it or a case merged into it (each session
    counted once; a merged case's count is its kept case's): cases_reuse_counted, the
    rule a merge counts by. Hits are left as the searches counted them."""
    return cases_reuse_write(cases_reuse_counted(case_ids=case_ids, hits=False), hits=False)


# The first sweep (no earlier one recorded) reads the ratings of this many days.
OUTCOME_WINDOW_DAYS = 7


def case_outcomes_sweep() -> int:
    """Recount the reuse outcomes of the cases found by sessions rated since the last
    sweep (a scheduled task, once a minute; the feedback request itself does nothing
    for it), however long after its searches a session was rated: the sessions rated
    since, off their (feedback, feedback_at) index, then their searches by session.
    (It read the searches of the last 7 days, so a rating given later was never counted
    but after a merge.) Returns how many cases were recounted."""
    state = CaseIndexState.objects.get_or_create(id=1)[0]
    started = timezone.now()
    since = state.outcomes_swept_at or started - timedelta(days=OUTCOME_WINDOW_DAYS)
    rated = DiagnosisSession.objects.filter(
        feedback__in=(Feedback.USEFUL, Feedback.NOT_USEFUL),
        feedback_at__gte=since - timedelta(seconds=5),
    )
    case_ids = sorted(
        set(
            CaseSearchHit.objects.filter(
                search__session_id__in=rated.values("session_id")
            ).values_list("case_id", flat=True)
        )
    )
    recounted = cases_outcomes_recount(case_ids=case_ids) if case_ids else 0
    CaseIndexState.objects.filter(id=1).update(outcomes_swept_at=started)
    # A case whose rebuild request was lost (a killed worker) is structured here.
    if cases_structure_new():
        case_index_request()
    return recounted
