"""One pass of the indexer: the oldest changed cases re-read, split into passages
(caselibrary/passages.py), embedded where their text is new, and written with their exact
keys in one transaction that also deletes the changes it handled and logs the cases it
indexed (case_index_log). A pass writes what it did after INDEX_PASS_SECONDS, a case half
embedded included, and the next goes on from there; a case that fails is logged and marked
again: none holds up the rest. The lease and the loop of passes are in `index`."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models.functions import Substr

from caselibrary.embedding import EMBEDDING_MODEL, EmbeddingUnavailable, embed_texts
from caselibrary.models import (
    CaseChange,
    CaseIndexLog,
    CaseLibrary,
    CaseMerge,
    CasePassage,
    CaseSearchKey,
)
from caselibrary.passages import INDEXED_CHARS, Planned, case_plan, embedding_input
from caselibrary.search_backends.base import IndexedPassage, get_backend
from caselibrary.search_backends.database import DatabaseBackend
from caselibrary.search_backends.milvus import MilvusBackend
from caselibrary.services.duplicates import cases_flag_duplicates, merges_release_deleted

logger = logging.getLogger(__name__)

INDEX_BATCH = 64
# A pass writes what it did after about this long, checking the time between
# EMBED_CHUNK passages (one takes 10-45 ms to embed; a case of 200,000 characters, 10-15 s).
INDEX_PASS_SECONDS = 5.0
EMBED_CHUNK = 16


def store() -> DatabaseBackend:
    """The database backend: the store of record of passages, whatever serves searches."""
    return get_backend("database")  # type: ignore[return-value]


@dataclass(frozen=True)
class IndexRun:
    cases: int  # indexed whole
    passages: int
    embedded: int
    seconds: float
    failed: tuple[str, ...] = ()  # the cases that could not be indexed, marked again
    partial: int = 0  # cases indexed in part, the rest left for the next pass


def case_index_pending(
    *, batch: int = INDEX_BATCH, seconds: float = INDEX_PASS_SECONDS, skip: Iterable[str] = ()
) -> IndexRun:
    """Index the oldest `batch` changed cases but those to `skip` for about `seconds`,
    the shortest first, the case it is embedding then keeping the passages done (the next
    pass does the rest).
    A case that fails is logged with its id at ERROR and marked again, behind the others."""
    started = time.monotonic()
    marks = CaseChange.objects.exclude(case_id__in=list(skip)).order_by("seq")
    changes = list(marks.values_list("seq", "case_id", "changed_at")[:batch])
    if not changes:
        return IndexRun(0, 0, 0, 0.0)
    backend = get_backend()
    if isinstance(backend, MilvusBackend):
        # Before anything is embedded or written: a server that is down fails the pass at
        # once, and a collection found lost is weighed against the passages the database
        # held before this pass (the first cases indexed into a new one are no loss).
        backend.connect()
    case_ids = list(dict.fromkeys(case_id for _, case_id, _ in changes))
    # A merged case is indexed as part of the case it was merged into.
    merges = CaseMerge.objects.filter(case_id__in=case_ids)
    into = dict(merges.values_list("case_id", "merged_into"))
    case_ids += [k for k in dict.fromkeys(into.values()) if k not in case_ids]
    indexed_before = set(
        CasePassage.objects.filter(case_id__in=case_ids).values_list("case_id", flat=True)
    )
    work = _index_cases(case_ids, until=started + seconds)
    written = [case_id for case_id in case_ids if case_id in work.written]
    done = {seq for seq, c, _ in changes if {c, into.get(c, c)} <= work.done}
    failed = [change for change in changes if {change[1], into.get(change[1])} & work.failed]
    # Marked again after the marks a drain waits for, at the first change's time (told).
    by_time = sorted(failed, key=lambda change: change[2], reverse=True)
    again = {c: CaseChange(case_id=c, changed_at=at) for _, c, at in by_time}
    with transaction.atomic():
        store().replace(written, work.passages)
        CaseSearchKey.objects.filter(case_id__in=written).delete()
        CaseSearchKey.objects.bulk_create(work.keys)
        CaseChange.objects.filter(seq__in=done | {seq for seq, _, _ in failed}).delete()
        CaseChange.objects.bulk_create(again.values())
        # A deleted case takes its merges along: the cases merged into it are marked, and
        # the next pass indexes them as cases of their own.
        merges_release_deleted(case_ids=[c for c in written if c in work.done])
        CaseIndexLog.objects.bulk_create(CaseIndexLog(case_id=case_id) for case_id in written)
        if settings.CASE_SEARCH_BACKEND != "database":
            # Inside the transaction: when the server refuses the write, the change marks
            # roll back and the next pass tries these cases again.
            backend.replace(written, work.passages)
    new = {p.case_pk for p in work.passages} - indexed_before
    if new:
        # A case indexed over several passes is compared by the part its first one wrote.
        cases_flag_duplicates(store(), sorted(new), work.passages)
    return IndexRun(
        len(work.done),
        len(work.passages),
        work.embedded,
        time.monotonic() - started,
        failed=tuple(sorted(work.failed | set(again))),
        partial=len(work.written - work.done),
    )


@dataclass
class _Indexed:
    passages: list[IndexedPassage] = field(default_factory=list)
    keys: list[CaseSearchKey] = field(default_factory=list)
    embedded: int = 0
    written: set[str] = field(default_factory=set)  # the cases whose passages are replaced
    done: set[str] = field(default_factory=set)  # of those, the ones indexed whole
    failed: set[str] = field(default_factory=set)


def _index_cases(case_ids: list[str], *, until: float) -> _Indexed:
    texts = [Substr(name, 1, INDEXED_CHARS) for name in ("root_cause", "solution")]
    columns = ("case_id", "title", *texts, "error_code")
    rows = {
        row[0]: row[1:]
        for row in CaseLibrary.objects.filter(case_id__in=case_ids)
        .exclude(case_id__in=CaseMerge.objects.values("case_id"))
        .values_list(*columns)
    }
    merges = CaseMerge.objects.filter(merged_into__in=list(rows))
    into = dict(merges.values_list("case_id", "merged_into"))
    merged: dict[str, list[tuple]] = {}
    for row in CaseLibrary.objects.filter(case_id__in=list(into)).values_list(*columns):
        merged.setdefault(into[row[0]], []).append(row[1:])
    # The questions whose answers made these cases (or the cases merged into them).
    questions: dict[str, list[str]] = {}
    for case_id, question in CaseLibrary.objects.filter(
        case_id__in=[*rows, *into], diagnosis__isnull=False
    ).values_list("case_id", "diagnosis__query"):
        if question:
            questions.setdefault(into.get(case_id, case_id), []).append(question)
    # The vectors already stored for the same text under the same model: an edit of the
    # category, or a save that changed nothing, costs no embedding.
    known = {
        (case_id, text): bytes(vector)
        for case_id, text, vector in CasePassage.objects.filter(
            case_id__in=case_ids, model=EMBEDDING_MODEL
        ).values_list("case_id", "text", "vector")
    }
    work = _Indexed()
    # The short cases first: a pass out of time on a long one has done the others.
    size = {c: len(r[1] or "") + len(r[2] or "") for c, r in rows.items()}
    for case_id in sorted(case_ids, key=lambda c: size.get(c, 0)):
        if work.written and time.monotonic() >= until:
            break  # the next pass goes on from this case
        # A case deleted, or merged into another, has no row: its passages go.
        row = rows.get(case_id, ("", "", "", None))
        try:
            planned, keys = case_plan(
                *row, merged=merged.get(case_id, ()), questions=questions.get(case_id, ())
            )
            passages, embedded, whole = _embed(case_id, row[0], planned, known, until)
        except Exception as exc:
            if isinstance(exc, EmbeddingUnavailable):
                embed_texts(["probe"])  # raises when the model fails whatever the text
            logger.exception("case not indexed: %s", case_id, extra={"case_id": case_id})
            work.failed.add(case_id)
            continue
        work.passages += passages
        work.keys += [CaseSearchKey(case_id=case_id, key=key) for key in keys]
        work.embedded += embedded
        work.written.add(case_id)
        if not whole:
            break
        work.done.add(case_id)
    return work


def _embed(
    case_id: str, title: str, planned: list[Planned], known: dict, until: float
) -> tuple[list[IndexedPassage], int, bool]:
    """A case's passages: those embedded EMBED_CHUNK at a time until `until` (one chunk
    at least), and those whose vectors are known. Whether that is all of them."""
    todo = [i for i, p in enumerate(planned) if (case_id, p.text) not in known]
    fresh: dict[int, np.ndarray] = {}
    for start in range(0, len(todo), EMBED_CHUNK):
        if fresh and time.monotonic() >= until:
            break
        chunk = todo[start : start + EMBED_CHUNK]
        inputs = [embedding_input(title, planned[i].kind, planned[i].text) for i in chunk]
        fresh.update(zip(chunk, embed_texts(inputs), strict=True))
    passages = [
        IndexedPassage(
            passage_id=f"{case_id}:{p.number}",
            case_pk=case_id,
            kind=p.kind,
            text=p.text,
            terms=p.terms,
            vector=fresh[i] if i in fresh else np.frombuffer(known[(case_id, p.text)], dtype="<f4"),
        )
        for i, p in enumerate(planned)
        if i in fresh or (case_id, p.text) in known
    ]
    return passages, len(fresh), len(fresh) == len(todo)
