"""django-q2 tasks of the case library. Thin: they call a service and are safe to repeat."""

from caselibrary.services.index import case_index_rebuild
from caselibrary.services.outcomes import case_outcomes_sweep


def case_index_rebuild_task() -> int | None:
    """Rebuild the search index if one is due; the number of cases indexed, or None when
    another worker was building (it picks up this request when it finishes)."""
    result = case_index_rebuild()
    return None if result is None else result.cases


def case_outcomes_task() -> int:
    """Scheduled every minute: cases found by sessions rated since learn the rating."""
    return case_outcomes_sweep()
