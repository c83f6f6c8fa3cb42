"""The search index, kept current one changed case at a time.

Database triggers put every changed case (insert, update, delete, by any path) into
case_change. The indexer, a task in the worker, takes the oldest changes, re-reads those
cases, splits them into passages (caselibrary/passages.py), embeds what is new and writes
passages, exact keys and vectors in one transaction that also deletes the changes it
handled and logs the cases it indexed (case_index_log). Each serving process reads that
log to reload the vectors it holds (caselibrary/search_backends/database.py).

One indexer at a time: it holds a lease (CaseIndexState.building_since), renewed at each
pass; a lease not renewed for INDEXER_LEASE_SECONDS is free. The indexer task runs for
INDEXER_RUN_SECONDS, then hands over to its next run (it enqueues it); the minute's
schedule restarts the chain if a worker died holding it. So while a worker runs, its
indexer holds the lease all the time, idle or not: the lease says "an indexer is watching
case_change", which is what spares every write from starting one. A command that wants
the waiting changes indexed (case_index_drain) indexes them itself when the lease is free,
and otherwise leaves them to that indexer and waits until it has done them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_q.tasks import async_task

from caselibrary.embedding import EMBEDDING_MODEL, EmbeddingUnavailable, embed_texts
from caselibrary.error_codes import error_code_key, find_error_codes
from caselibrary.models import (
    CaseChange,
    CaseIndexLog,
    CaseIndexState,
    CaseLibrary,
    CaseMerge,
    CasePassage,
    CaseSearchKey,
)
from caselibrary.passages import Passage, case_passages
from caselibrary.search_backends.base import IndexedPassage, get_backend
from caselibrary.search_backends.database import DatabaseBackend
from caselibrary.search_text import search_terms, text_key
from caselibrary.services.duplicates import cases_flag_duplicates, merges_release_deleted
from caselibrary.services.proposals import cases_structure_new

logger = logging.getLogger(__name__)

INDEX_TASK = "caselibrary.tasks.case_indexer_task"
INDEX_GROUP = "case-index"
INDEX_BATCH = 64
INDEXER_RUN_SECONDS = 20
INDEXER_LEASE_SECONDS = 10
# Serving processes read the log every fraction of a second; an hour is plenty.
LOG_KEEP = timedelta(hours=1)


def _store() -> DatabaseBackend:
    """The database backend: the store of record of passages, whatever serves searches."""
    return get_backend("database")  # type: ignore[return-value]


@dataclass(frozen=True)
class IndexRun:
    cases: int
    passages: int
    embedded: int
    seconds: float


def case_index_request() -> None:
    """Index the current transaction's case changes as soon as it commits.

    The triggers have already marked them, and the worker's indexer would find them
    within CASE_INDEXER_POLL_SECONDS; this only starts an indexer at once where none
    runs (a worker just started, or the task queue running inline). Inside
    `case_index_requests_deferred()` it does nothing: the block's caller asks once.
    """
    if not _deferred.get():
        transaction.on_commit(_request, robust=True)


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


def _request() -> None:
    # An indexer that holds the lease finds the change itself.
    if not case_indexer_running():
        async_task(INDEX_TASK, group=INDEX_GROUP)


def case_indexer_running() -> bool:
    """Whether a live indexer holds the lease (one primary-key read)."""
    fresh = timezone.now() - timedelta(seconds=INDEXER_LEASE_SECONDS)
    return CaseIndexState.objects.filter(id=1, building_since__gte=fresh).exists()


def exact_keys(*, title: str, error_code: str | None) -> list[str]:
    """The L0 keys of a case: its error code, the codes and alert names in its title, its
    normalised title."""
    codes = ([error_code] if error_code else []) + find_error_codes(title)
    keys = [f"code:{error_code_key(code)}" for code in codes]
    if text_key(title):
        keys.append(f"title:{text_key(title)}")
    return list(dict.fromkeys(key[:128] for key in keys))


def embedding_input(title: str, kind: str, text: str) -> str:
    """What a passage's vector is made of: a part of a case says more with its title."""
    return text if kind == "title" else f"{title}\n{text}"


def case_index_pending(*, batch: int = INDEX_BATCH) -> IndexRun:
    """Index the oldest `batch` changed cases; how many were indexed (0: none waiting)."""
    started = time.monotonic()
    changes = list(CaseChange.objects.order_by("seq").values_list("seq", "case_id")[:batch])
    if not changes:
        return IndexRun(0, 0, 0, 0.0)
    case_ids = list(dict.fromkeys(case_id for _, case_id in changes))
    # A merged case is indexed as part of the case it was merged into.
    kept = CaseMerge.objects.filter(case_id__in=case_ids).values_list("merged_into", flat=True)
    case_ids += [k for k in kept if k not in case_ids]
    indexed_before = set(
        CasePassage.objects.filter(case_id__in=case_ids).values_list("case_id", flat=True)
    )
    passages, keys, embedded = _index_cases(case_ids)
    with transaction.atomic():
        _store().replace(case_ids, passages)
        CaseSearchKey.objects.filter(case_id__in=case_ids).delete()
        CaseSearchKey.objects.bulk_create(keys)
        CaseChange.objects.filter(seq__in=[seq for seq, _ in changes]).delete()
        # A deleted case takes its merges along: the cases merged into it are marked, and
        # the next pass indexes them as cases of their own.
        merges_release_deleted(case_ids=case_ids)
        CaseIndexLog.objects.bulk_create(CaseIndexLog(case_id=case_id) for case_id in case_ids)
        if settings.CASE_SEARCH_BACKEND != "database":
            # Inside the transaction: when the server refuses the write, the change marks
            # roll back and the next run tries these cases again.
            get_backend().replace(case_ids, passages)
    new = {p.case_pk for p in passages} - indexed_before
    if new:
        cases_flag_duplicates(_store(), sorted(new), passages)
    return IndexRun(len(case_ids), len(passages), embedded, time.monotonic() - started)


def _index_cases(case_ids: list[str]) -> tuple[list[IndexedPassage], list[CaseSearchKey], int]:
    columns = ("case_id", "title", "root_cause", "solution", "error_code")
    rows = list(
        CaseLibrary.objects.filter(case_id__in=case_ids)
        .exclude(case_id__in=CaseMerge.objects.values("case_id"))
        .values_list(*columns)
    )
    into = dict(
        CaseMerge.objects.filter(merged_into__in=[r[0] for r in rows]).values_list(
            "case_id", "merged_into"
        )
    )
    merged: dict[str, list[tuple]] = {}
    for row in CaseLibrary.objects.filter(case_id__in=list(into)).values_list(*columns):
        merged.setdefault(into[row[0]], []).append(row)
    # The vectors already stored for the same text under the same model: an edit of the
    # category, or a save that changed nothing, costs no embedding.
    known = {
        (case_id, text): bytes(vector)
        for case_id, text, vector in CasePassage.objects.filter(
            case_id__in=case_ids, model=EMBEDDING_MODEL
        ).values_list("case_id", "text", "vector")
    }
    planned: list[tuple[str, int, str, str, str, str]] = []
    keys: list[CaseSearchKey] = []
    for case_id, title, root_cause, solution, error_code in rows:
        parts = case_passages(title=title, root_cause=root_cause, solution=solution)
        case_keys = exact_keys(title=title, error_code=error_code)
        for _, m_title, m_cause, m_solution, m_code in merged.get(case_id, []):
            # A merged case's texts are sections of the case it was merged into.
            parts += [
                Passage("section", p.text)
                for p in case_passages(title=m_title, root_cause=m_cause, solution=m_solution)
            ]
            case_keys += exact_keys(title=m_title, error_code=m_code)
        for number, passage in enumerate(parts):
            terms = search_terms(passage.text)
            # A passage without one search term ("t", "…", a bare number) says nothing a
            # question could match; embedded, a one-letter text sat close to every short
            # question and was offered for "hello" and "🔥🔥🔥".
            if terms:
                planned.append((case_id, number, passage.kind, passage.text, title, terms))
        keys += [CaseSearchKey(case_id=case_id, key=key) for key in dict.fromkeys(case_keys)]
    todo = [
        i for i, (case_id, _, _, text, *_) in enumerate(planned) if (case_id, text) not in known
    ]
    vectors = embed_texts([embedding_input(p[4], p[2], p[3]) for p in (planned[i] for i in todo)])
    fresh = dict(zip(todo, vectors, strict=True))
    passages = [
        IndexedPassage(
            passage_id=f"{case_id}:{number}",
            case_pk=case_id,
            kind=kind,
            text=text,
            terms=terms,
            vector=fresh[i] if i in fresh else np.frombuffer(known[(case_id, text)], dtype="<f4"),
        )
        for i, (case_id, number, kind, text, _title, terms) in enumerate(planned)
    ]
    return passages, keys, len(todo)


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
        _store().vectors()
        stamp = _renew(stamp)
    return stamp


def case_indexer_run(
    *, seconds: float, indexed: Callable[[IndexRun], None] | None = None
) -> int | None:
    """Index changes as they come for `seconds` (0: until none is left), telling
    `indexed` of each pass that indexed something. The cases indexed, or None when
    another indexer holds the lease."""
    stamp = _claim()
    if stamp is None:
        return None
    cases = 0
    deadline = time.monotonic() + seconds
    try:
        if seconds > 0:
            stamp = _warm_up(stamp)
        if stamp is not None:
            cases_structure_new()  # new AUTO cases' error codes are exact keys too
        while stamp is not None:
            run = case_index_pending()
            cases += run.cases
            if run.cases:
                logger.info(
                    "cases indexed",
                    extra={"cases": run.cases, "embedded": run.embedded, "seconds": run.seconds},
                )
                _record(run)
                if indexed is not None:
                    indexed(run)
            elif seconds <= 0 or time.monotonic() >= deadline:
                break
            else:
                time.sleep(settings.CASE_INDEXER_POLL_SECONDS)
            if seconds > 0 and time.monotonic() >= deadline:
                break
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
    (or missing), or all of them. Resumable: a case indexed meanwhile is simply indexed
    again. The number of cases marked."""
    if everything:
        ids: Iterable[str] = CaseLibrary.objects.values_list("case_id", flat=True).iterator()
    else:
        current = CasePassage.objects.filter(model=EMBEDDING_MODEL).values("case_id")
        ids = (
            CaseLibrary.objects.exclude(case_id__in=current)
            .values_list("case_id", flat=True)
            .iterator()
        )
    marked = 0
    chunk: list[CaseChange] = []
    for case_id in ids:
        chunk.append(CaseChange(case_id=case_id))
        if len(chunk) == 1000:
            CaseChange.objects.bulk_create(chunk)
            marked, chunk = marked + len(chunk), []
    CaseChange.objects.bulk_create(chunk)
    return marked + len(chunk)


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
    if progress is not None:
        progress(0, total)

    def follow(run: IndexRun | None = None) -> None:
        nonlocal left
        left = ours.count()
        if progress is not None:
            progress(total - left, total)

    while True:
        here = case_indexer_run(seconds=0, indexed=follow)
        follow()
        if not left:
            return cases
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


def case_index_record_findability(*, report: dict) -> None:
    CaseIndexState.objects.get_or_create(id=1)
    CaseIndexState.objects.filter(id=1).update(findability=report)
