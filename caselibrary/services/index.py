"""The search index, kept current one changed case at a time.

Database triggers put every changed case (insert, update, delete, by any path) into
case_change. The indexer, a task in the worker, indexes them in passes (one pass, from
reading the changes to writing the passages and vectors, is `index_pass`). Each serving
process reads the log of indexed cases to reload the vectors it holds
(caselibrary/search_backends/database.py).

One indexer at a time: it holds a lease (CaseIndexState.building_since), renewed at each
pass; a lease not renewed for INDEXER_LEASE_SECONDS is free. The indexer task runs for
INDEXER_RUN_SECONDS, then hands over to its next run (it enqueues it); the minute's
schedule restarts the chain if a worker died holding it. So while a worker runs, its
indexer holds the lease all the time, idle or not: the lease says "an indexer is watching
case_change", which is what spares every write from starting one. A command that wants
the waiting changes indexed (case_index_drain) indexes them itself when the lease is free,
and otherwise leaves them to that indexer and waits until it has done them.

A search backend that fails a pass (a Milvus server down) stops no run: the run tries
again after 1, 2, 4, then every 5 seconds, within its time, and hands the outage on to
the next run, so that it is logged once when it begins and once when it ends. A backend
that finds its collection lost (case_index_refill) has every case queued again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Substr
from django.utils import timezone

from caselibrary.embedding import EMBEDDING_MODEL, EmbeddingUnavailable, embed_texts
from caselibrary.models import (
    CaseChange,
    CaseIndexLog,
    CaseIndexState,
    CaseLibrary,
    CaseMerge,
    CasePassage,
)
from caselibrary.passages import INDEXED_CHARS, case_plan
from caselibrary.search_backends.base import BackendUnavailable, get_backend
from caselibrary.services.index_pass import (
    INDEX_PASS_SECONDS,
    IndexRun,
    case_index_pending,
    store,
)
from caselibrary.services.proposals import cases_structure_new
from config.queue import enqueue_on_commit

logger = logging.getLogger(__name__)

INDEX_TASK = "caselibrary.tasks.case_indexer_task"
INDEX_GROUP = "case-index"
INDEXER_RUN_SECONDS = 20
INDEXER_LEASE_SECONDS = 10
# Serving processes read the log every fraction of a second; an hour is plenty.
LOG_KEEP = timedelta(hours=1)
# A pass the search backend failed is tried again after 1, 2, 4, then every 5 seconds.
BACKEND_RETRY_FIRST_SECONDS = 1.0
BACKEND_RETRY_MAX_SECONDS = 5.0


def indexer_run_seconds() -> float:
    """How long one indexer task runs: its passes end with it (but for one chunk of
    embedding), well before the task's timeout (Q_TIMEOUT) would kill it."""
    return min(INDEXER_RUN_SECONDS, settings.Q_CLUSTER["timeout"] * 2 / 3)


def case_index_request() -> None:
    """Index the current transaction's case changes as soon as it commits.

    The triggers have already marked them, and the worker's indexer would find them
    within CASE_INDEXER_POLL_SECONDS; this only starts an indexer at once where none
    runs (a worker just started, or the task queue running inline). Inside
    `case_index_requests_deferred()` it does nothing: the block's caller asks once.
    """
    if not _deferred.get():
        # An indexer that holds the lease at the commit finds the change itself. A broker
        # that cannot take the task, or a failing check, never fails the write.
        enqueue_on_commit(INDEX_TASK, group=INDEX_GROUP, robust=True, when=_no_indexer)


_deferred: ContextVar[bool] = ContextVar("case_index_requests_deferred", default=False)


@contextmanager
def case_index_requests_deferred() -> Iterator[None]:
    """Case writes inside ask for no indexer: the caller writing many cases in one
    transaction asks once, after them. An import of 1,500 rows asked 1,500 times, and
    where no worker ran queued as many indexer tasks (9.7 s for the file; 4.4 s with a
    worker running)."""
    token = _deferred.set(True)
    try:
        yield
    finally:
        _deferred.reset(token)


def _no_indexer() -> bool:
    return not case_indexer_running()


def case_indexer_running() -> bool:
    """Whether a live indexer holds the lease (one primary-key read)."""
    fresh = timezone.now() - timedelta(seconds=INDEXER_LEASE_SECONDS)
    return CaseIndexState.objects.filter(id=1, building_since__gte=fresh).exists()


# --- the indexer's lease and loop ----------------------------------------------------


def _claim() -> object | None:
    """Take the indexer's lease; its stamp, or None when another indexer holds it."""
    CaseIndexState.objects.get_or_create(id=1)
    now = timezone.now()
    stale = now - timedelta(seconds=INDEXER_LEASE_SECONDS)
    taken = (
        CaseIndexState.objects.filter(id=1)
        .filter(Q(building_since__isnull=True) | Q(building_since__lt=stale))
        .update(building_since=now)
    )
    return now if taken else None


def _renew(stamp: object) -> object | None:
    now = timezone.now()
    kept = CaseIndexState.objects.filter(id=1, building_since=stamp).update(building_since=now)
    return now if kept else None


def _release(stamp: object) -> None:
    CaseIndexState.objects.filter(id=1, building_since=stamp).update(building_since=None)


def _record(run: IndexRun) -> None:
    """What the index now holds, for the overview and `case_index` (one count per pass
    that indexed something)."""
    CaseIndexState.objects.filter(id=1).update(
        built_at=timezone.now(),
        version=EMBEDDING_MODEL,
        cases=CasePassage.objects.values("case_id").distinct().count(),
        build_seconds=round(run.seconds, 3),
    )


def _warm_up(stamp: object) -> object | None:
    """Load the model and the vectors (for the near-duplicate check) before the first
    change comes, not when it comes: in a worker just started, the first case inserted
    into a library of 100,000 was found after 14.5 s, the next ones after about 2 s.
    Once per worker process; the next runs find both loaded. The lease is renewed after
    each (at 100,000 cases both together take longer than an unrenewed lease lasts);
    the stamp, or None when another indexer took the lease meanwhile."""
    with suppress(EmbeddingUnavailable):  # then the first pass that embeds fails, as before
        embed_texts(["warm"])
    stamp = _renew(stamp)
    if stamp is not None:
        store().vectors()
        stamp = _renew(stamp)
    return stamp


@dataclass
class BackendOutage:
    """The search backend failing the indexer's passes, as the indexer lives through it:
    one WARNING when it begins (the backend's message, which names the server and the
    call, never a credential; no traceback) and one line when it ends, however many runs
    it lasts: each run hands it to the next (case_indexer_task)."""

    since: float | None = None  # time.time() when it began; None: the backend answers
    delay: float = BACKEND_RETRY_FIRST_SECONDS

    def __post_init__(self) -> None:
        if self.since is not None:  # handed on by the run before: tried a while already
            self.delay = BACKEND_RETRY_MAX_SECONDS

    def failed(self, error: BackendUnavailable) -> float:
        """A pass failed; the seconds to wait before the next."""
        if self.since is None:
            self.since = time.time()
            logger.warning(
                "case indexer: the search backend is unavailable; the changed cases wait, "
                "tried again every few seconds: %s",
                error,
            )
        delay, self.delay = self.delay, min(self.delay * 2, BACKEND_RETRY_MAX_SECONDS)
        return delay

    def answered(self) -> None:
        if self.since is not None:
            logger.info(
                "case indexer: the search backend answers again, after %.0f s",
                time.time() - self.since,
            )
        self.since, self.delay = None, BACKEND_RETRY_FIRST_SECONDS


def case_indexer_run(
    *,
    seconds: float,
    indexed: Callable[[IndexRun], None] | None = None,
    outage: BackendOutage | None = None,
) -> int | None:
    """Index changes as they come for `seconds` (0: until none is left), telling
    `indexed` of each pass that indexed something. The cases indexed, or None when
    another indexer holds the lease.

    A pass the search backend fails is tried again within the run (`outage` follows it);
    with `seconds` 0 (a drain, or the queue run inline) the failure is raised instead."""
    stamp = _claim()
    if stamp is None:
        return None
    outage = outage if outage is not None else BackendOutage()
    cases = 0
    deadline = time.monotonic() + seconds
    failed: set[str] = set()  # tried again by the next run
    try:
        if seconds > 0:
            stamp = _warm_up(stamp)
        if stamp is not None:
            cases_structure_new()  # new AUTO cases' error codes are exact keys too
        while stamp is not None:
            left = deadline - time.monotonic() if seconds > 0 else INDEX_PASS_SECONDS
            try:
                run = case_index_pending(
                    seconds=max(0.0, min(INDEX_PASS_SECONDS, left)), skip=failed
                )
            except BackendUnavailable as error:
                if seconds <= 0:
                    raise
                # The pass wrote nothing and its changes stay marked. The wait ends by the
                # run's deadline, well before the task's timeout; the lease outlives it.
                wait = outage.failed(error)
                stamp = _renew(stamp)
                if stamp is not None:
                    time.sleep(max(0.0, min(wait, deadline - time.monotonic())))
            else:
                outage.answered()
                cases += run.cases
                failed.update(run.failed)
                if run.cases or run.partial or run.failed:
                    logger.info("cases indexed", extra=asdict(run) | {"failed": list(run.failed)})
                    _record(run)
                    if indexed is not None:
                        indexed(run)
                elif seconds <= 0 or time.monotonic() >= deadline:
                    break
                else:
                    time.sleep(settings.CASE_INDEXER_POLL_SECONDS)
            if seconds > 0 and time.monotonic() >= deadline:
                break
            if stamp is not None:
                stamp = _renew(stamp)
        CaseIndexLog.objects.filter(indexed_at__lt=timezone.now() - LOG_KEEP).delete()
    finally:
        if stamp is not None:
            _release(stamp)
    return cases


def case_index_build() -> int:
    """Index every waiting change before returning (tests, the demo data, `case_index
    --build`): here, or by the running worker's indexer. The cases they were."""
    return case_index_drain()


def cases_mark_for_reindex(*, everything: bool) -> int:
    """Put cases back in the indexer's queue: those whose vectors are of another model
    (or missing), or all of them, but for those waiting in it already. Resumable: a run
    stopped half-way left the cases not done waiting, and the next queues none of them
    again (each run added a row per case not done: 102 cases, then 201 rows, then 289);
    a case indexed meanwhile is simply indexed again. The number of cases marked."""
    waiting = CaseChange.objects.values("case_id")
    if everything:
        cases = CaseLibrary.objects.exclude(case_id__in=waiting)
        ids: Iterable[str] = cases.values_list("case_id", flat=True).iterator()
    else:
        ids = _cases_without_vectors_of_this_model(waiting=waiting)
    marked = 0
    chunk: list[CaseChange] = []
    for case_id in ids:
        chunk.append(CaseChange(case_id=case_id))
        if len(chunk) == 1000:
            CaseChange.objects.bulk_create(chunk)
            marked, chunk = marked + len(chunk), []
    CaseChange.objects.bulk_create(chunk)
    return marked + len(chunk)


def case_index_refill(*, found: str) -> int:
    """Queue every case for the indexer again, as `reindex_cases --all` does, because the
    search backend found what it held lost (`found` says how, for the log). Only when the
    database holds passages of this model, whose stored vectors the indexer writes back
    without embedding them again (after a change of model, `reindex_cases` rebuilds),
    and some case is not queued already: the processes that find the same loss queue
    them once. The cases queued."""
    CaseIndexState.objects.get_or_create(id=1)
    with transaction.atomic():
        # One process at a time decides; the next finds the cases queued.
        CaseIndexState.objects.select_for_update().get(id=1)
        if not CasePassage.objects.filter(model=EMBEDDING_MODEL).exists():
            return 0
        waiting = CaseChange.objects.values("case_id")
        if not CaseLibrary.objects.exclude(case_id__in=waiting).exists():
            return 0
        marked = cases_mark_for_reindex(everything=True)
    logger.warning(
        "%s, while the database holds the indexed cases: every case (%d) is queued for the "
        "indexer again, which writes them back from their stored vectors",
        found,
        marked,
    )
    case_index_request()  # the worker's indexer takes them; one is started if none runs
    return marked


def refill_when_collection_lost(
    sender: object, *, backend: object, found: str, **kwargs: object
) -> None:
    """The receiver of search_backends.base.collection_lost (connected in apps.py)."""
    if backend is get_backend():  # not a collection of a benchmark's or a test's own
        case_index_refill(found=found)


def _cases_without_vectors_of_this_model(*, waiting: QuerySet) -> Iterator[str]:
    """The cases with passages of another model only, and those with no passage at all
    whose texts make one, but for those `waiting` (in the queue already). A case merged
    into another, or whose texts hold no search term, has none once indexed: it is not
    marked again at every run."""
    current = CasePassage.objects.filter(model=EMBEDDING_MODEL).values("case_id")
    stored = CasePassage.objects.values("case_id")
    without = CaseLibrary.objects.exclude(case_id__in=current).exclude(case_id__in=waiting)
    yield from without.filter(case_id__in=stored).values_list("case_id", flat=True).iterator()
    bare = without.exclude(case_id__in=stored).exclude(
        case_id__in=CaseMerge.objects.values("case_id")
    )
    # A case others were merged into is indexed with their texts: marked without asking.
    kept = CaseMerge.objects.values("merged_into")
    yield from bare.filter(case_id__in=kept).values_list("case_id", flat=True).iterator()
    texts = [Substr(name, 1, INDEXED_CHARS) for name in ("root_cause", "solution")]
    rows = bare.exclude(case_id__in=kept).values_list("case_id", "title", *texts, "error_code")
    for case_id, *row in rows.iterator():
        if case_plan(*row)[0]:
            yield case_id


def case_index_drain(*, progress: Callable[[int, int], None] | None = None) -> int:
    """Return once every change waiting now is indexed; the cases they were.

    Indexed here when the lease is free. While a live indexer holds it (a worker's, which
    holds it as long as the worker runs), that indexer indexes them, within
    CASE_INDEXER_POLL_SECONDS, and this waits for it, taking over should its lease fall
    free. `progress(done, total)` follows the waiting changes (reindex_cases' bar).
    Stopped half-way, the changes not done stay marked: the next indexer does them."""
    last = CaseChange.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
    ours = CaseChange.objects.filter(seq__lte=last)
    cases = ours.values("case_id").distinct().count()
    total = left = ours.count()
    failed: set[str] = set()
    if progress is not None:
        progress(0, total)

    def follow(run: IndexRun | None = None) -> None:
        nonlocal left
        left = ours.count()
        failed.update(run.failed if run else ())
        if progress is not None:
            progress(total - left, total)

    while True:
        here = case_indexer_run(seconds=0, indexed=follow)
        follow()
        if not left:  # a case that failed is marked again, after `last`
            return cases - len(failed)
        if here is None:
            if transaction.get_connection().in_atomic_block:
                # The indexer cannot see changes this transaction has not committed.
                raise ValidationError(
                    "The worker's indexer holds the index; commit first, then index."
                )
            time.sleep(settings.CASE_INDEXER_POLL_SECONDS)


def case_passages_of_other_models() -> int:
    """Passages whose vectors are not of this version's model: after reindex_cases, the
    work of a worker of another version, whose indexer took the marked cases."""
    return CasePassage.objects.exclude(model=EMBEDDING_MODEL).count()


def cases_by_model() -> dict[str, int]:
    """How many cases have passages of each embedding model, the most first: a single
    model, but for a re-index after a change of model (`case_index` says how far it is)."""
    rows = CasePassage.objects.values_list("model").annotate(cases=Count("case_id", distinct=True))
    return dict(rows.order_by("-cases", "model"))


def case_index_record_findability(*, report: dict) -> None:
    CaseIndexState.objects.get_or_create(id=1)
    CaseIndexState.objects.filter(id=1).update(findability=report)
