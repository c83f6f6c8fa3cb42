"""django-q2 tasks of the case library. Thin: they call a service and are safe to repeat."""

from django.conf import settings
from django_q.tasks import async_task

from caselibrary.services import case_index_rebuild, case_outcomes_sweep

INDEX_TASK = "caselibrary.tasks.case_index_rebuild_task"
INDEX_GROUP = "case-index"


def case_index_rebuild_task() -> int | None:
    """Rebuild the search index if one is due; the number of cases indexed, or None when
    another worker was building (it picks up this request when it finishes)."""
    result = case_index_rebuild()
    return None if result is None else result.cases


def case_index_enqueue() -> None:
    """Queue a rebuild now (callers are already past their commit)."""
    # A build of a large library outlasts the cluster's timeout for scoring tasks; a
    # second delivery while it runs finds the build claimed and returns at once.
    async_task(
        INDEX_TASK,
        group=INDEX_GROUP,
        timeout=settings.CASE_INDEX_BUILD_TIMEOUT,
    )


def case_outcomes_task() -> int:
    """Scheduled every minute: cases found by sessions rated since learn the rating."""
    return case_outcomes_sweep()
