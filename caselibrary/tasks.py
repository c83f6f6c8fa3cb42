"""django-q2 tasks of the case library. Thin: they call a service and are safe to repeat."""

from django.conf import settings

from caselibrary.services.index import (
    INDEX_GROUP,
    INDEX_TASK,
    BackendOutage,
    case_indexer_run,
    indexer_run_seconds,
)
from caselibrary.services.outcomes import case_outcomes_sweep
from config.queue import enqueue_on_commit


def case_indexer_task(backend_down_since: float | None = None) -> int | None:
    """Index changed cases as they come for a while (well within the task's timeout),
    then hand over to the next run, with the search backend's outage if one goes on
    (`backend_down_since`: then it is not logged again).

    Started by every service write and by the minute's schedule; a run that finds the
    lease held ends at once (the holder goes on). Inline (Q_SYNC) it indexes what is
    waiting and stops."""
    if settings.Q_CLUSTER.get("sync"):
        return case_indexer_run(seconds=0)
    outage = BackendOutage(since=backend_down_since)
    cases = case_indexer_run(seconds=indexer_run_seconds(), outage=outage)
    if cases is not None:
        # Outside a transaction: queued at once. Should the broker refuse, the minute's
        # schedule starts the next run.
        down = {} if outage.since is None else {"backend_down_since": outage.since}
        enqueue_on_commit(INDEX_TASK, group=INDEX_GROUP, **down)
    return cases


def case_outcomes_task() -> int:
    """Scheduled every minute: cases found by sessions rated since learn the rating."""
    return case_outcomes_sweep()
