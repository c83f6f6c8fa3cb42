"""Writes to the case library. This module owns the case table.

Every write records who made it (`created_by` / `updated_by`): `system` for cases made
from feedback, the operator's username for edits in the admin.
"""

import logging
import time
import uuid
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, F, Q, When
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django_q.tasks import async_task

from caselibrary import structuring
from caselibrary.error_codes import normalise_error_code
from caselibrary.models import (
    GENERAL_CATEGORY,
    SYSTEM_USER,
    TITLE_FROM_QUERY_LENGTH,
    CaseIndexState,
    CaseLibrary,
    CaseReuse,
    CaseSearch,
    CaseSearchHit,
    CaseStructuring,
    FaultCategory,
    SourceType,
)
from caselibrary.search_index import L0, L1, BuildResult, CaseText, build
from caselibrary.search_text import text_key
from caselibrary.selectors import (
    CasesFound,
    cases_find,
    fault_category_in_use,
    fault_category_taxonomy,
    fault_category_taxonomy_forget,
)
from config import metrics
from diagnosis.models import (
    DiagnosisSession,
    Feedback,
    InvocationStatus,
    SessionStatus,
    ToolKind,
)
from diagnosis.services import SessionFinished, SessionNotFound, invocations_record

logger = logging.getLogger(__name__)

EDITABLE_FIELDS = frozenset(
    {"fault_category", "error_code", "title", "root_cause", "solution", "diagnosis_id"}
)
# What the search index reads: a change to any of these asks for a rebuild.
INDEXED_FIELDS = frozenset({"error_code", "title", "root_cause", "solution"})


# AUTO cases not yet structured (no proposal) among those made since `since`, with the
# opening of their session's question and answer; oldest first.
_TO_STRUCTURE = (
    "SELECT c.case_id, c.created_at, SUBSTR(s.query, 1, %s), SUBSTR(s.answer, 1, %s) "
    "FROM case_library c JOIN diagnosis_session s ON s.session_id = c.diagnosis_id "
    "WHERE c.source_type = %s AND c.created_by = %s AND c.created_at >= %s "
    "AND NOT EXISTS (SELECT 1 FROM case_structuring p WHERE p.case_id = c.case_id) "
    "ORDER BY c.created_at, c.case_id LIMIT %s"
)
# A pass looks this far back before the newest case it structured, for cases whose
# transaction committed after a later one's (created_at is set before the commit).
STRUCTURING_LOOKBACK = timedelta(minutes=10)
STRUCTURING_BATCH = 500


def case_create_from_session(*, session: DiagnosisSession) -> CaseLibrary:
    """Make the session's AUTO case: the question's first characters as its title, the
    whole answer as root cause and solution, `GENERAL`, made by `system`.

    The caller holds the session's row lock in its transaction (`select_for_update()`)
    and has checked that the session has no case: under that lock nobody else makes
    one. The error code and fault category are filled seconds later by
    `cases_structure_new` in the task worker, with the index rebuild the new case asks for.
    """
    case = CaseLibrary.objects.create(
        diagnosis_id=session.session_id,
        source_type=SourceType.AUTO,
        fault_category=GENERAL_CATEGORY,
        title=session.query[:TITLE_FROM_QUERY_LENGTH],
        root_cause=session.answer,
        solution=session.answer,
        created_by=SYSTEM_USER,
        updated_by=SYSTEM_USER,
    )
    transaction.on_commit(partial(metrics.case_created, SourceType.AUTO.value), robust=True)
    case_index_request_rebuild()
    return case


def cases_structure_new() -> int:
    """Fill the error code and fault category of new AUTO cases; how many were structured.

    caselibrary/structuring.py proposes them from the opening of the session's question
    and answer; the proposal is kept in case_structuring, and applied to the case unless
    an operator saved it first (then the operator's values stand, and the overview's
    accuracy compares them with the proposal). Cases made before the structuring existed
    (before `CaseIndexState.structured_until` was first set) are left as they are. Run by
    the index rebuild before it reads the cases, and by the scheduled outcome sweep.
    """
    state = CaseIndexState.objects.get_or_create(id=1)[0]
    if state.structured_until is None:
        since = datetime(1970, 1, 1, tzinfo=UTC)
    else:
        since = state.structured_until - STRUCTURING_LOOKBACK
    taxonomy = fault_category_taxonomy()
    structured = 0
    newest = state.structured_until
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                _TO_STRUCTURE,
                [
                    structuring.QUESTION_CHARS,
                    structuring.ANSWER_CHARS,
                    SourceType.AUTO.value,
                    SYSTEM_USER,
                    connection.ops.adapt_datetimefield_value(since),
                    STRUCTURING_BATCH,
                ],
            )
            rows = cursor.fetchall()
        for case_id, created_at, query, answer in rows:
            proposal = structuring.propose(
                query=query or "",
                answer=answer or "",
                taxonomy=taxonomy,
                default_category=GENERAL_CATEGORY,
            )
            try:
                with transaction.atomic():
                    # The proposal first: its key lets one pass structure a case.
                    CaseStructuring.objects.create(
                        case_id=case_id,
                        proposed_category=proposal.fault_category,
                        proposed_error_code=proposal.error_code,
                        method=structuring.METHOD_VERSION,
                        proposed_at=timezone.now(),
                    )
                    CaseLibrary.objects.filter(case_id=case_id, updated_by=SYSTEM_USER).update(
                        fault_category=proposal.fault_category, error_code=proposal.error_code
                    )
            except IntegrityError:
                continue  # another worker's pass took it
            created_at = _as_datetime(created_at)
            newest = created_at if newest is None else max(newest, created_at)
            structured += 1
        if len(rows) < STRUCTURING_BATCH:
            break
    if newest is not None and newest != state.structured_until:
        CaseIndexState.objects.filter(id=1).update(structured_until=newest)
    if structured:
        logger.info("cases structured", extra={"cases": structured})
    return structured


def case_create_manual(
    *,
    created_by: str,
    title: str,
    root_cause: str,
    solution: str,
    fault_category: str = GENERAL_CATEGORY,
    error_code: str | None = None,
    diagnosis_id: str | None = None,
) -> CaseLibrary:
    """A case an operator writes, from scratch or prefilled from a session."""
    case = CaseLibrary(
        source_type=SourceType.MANUAL,
        title=title,
        root_cause=root_cause,
        solution=solution,
        fault_category=fault_category,
        error_code=normalise_error_code(error_code) if error_code else None,
        diagnosis_id=diagnosis_id or None,
        created_by=created_by,
        updated_by=created_by,
    )
    _check_category(case.fault_category)
    case.full_clean()
    case.save(force_insert=True)
    case_index_request_rebuild()
    transaction.on_commit(partial(metrics.case_created, SourceType.MANUAL.value))
    return case


def case_update(*, case: CaseLibrary, updated_by: str, **changes: Any) -> CaseLibrary:
    """Apply an operator's edits and record who made them."""
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise ValidationError({name: "This field cannot be edited." for name in sorted(unknown)})
    if changes.get("error_code"):
        changes["error_code"] = normalise_error_code(changes["error_code"])
    for name, value in changes.items():
        setattr(case, name, value)
    if "fault_category" in changes:
        _check_category(case.fault_category)
    case.updated_by = updated_by
    case.full_clean()
    case.save(update_fields=[*changes, "updated_by", "updated_at"])
    if changes.keys() & INDEXED_FIELDS:
        case_index_request_rebuild()
    return case


def cases_set_category(*, case_ids: Collection[str], fault_category: str, updated_by: str) -> int:
    """Bulk "set category"; returns how many cases changed."""
    _check_category(fault_category)
    return CaseLibrary.objects.filter(case_id__in=case_ids).update(
        fault_category=fault_category, updated_by=updated_by, updated_at=timezone.now()
    )


def cases_delete(*, case_ids: Collection[str]) -> int:
    """Remove cases an operator judged wrong; returns how many went.

    The source sessions stay: a session whose case is gone can be made into a case again.
    """
    deleted, _ = CaseLibrary.objects.filter(case_id__in=case_ids).delete()
    if deleted:
        case_index_request_rebuild()
    return deleted


def fault_category_save(
    *, code: str, name: str, description: str = "", keywords: str = ""
) -> FaultCategory:
    """Add a category to the taxonomy, or rename/redescribe one (its code is its key).

    Its keywords take effect for new AUTO cases at once in this process, and within
    TAXONOMY_CACHE_SECONDS in the others.
    """
    category = FaultCategory(code=code, name=name, description=description, keywords=keywords)
    category.full_clean(validate_unique=False)
    category.save()
    fault_category_taxonomy_forget()
    return category


def fault_category_delete(*, code: str) -> None:
    """Drop a category no case uses; GENERAL, where every AUTO case starts, stays."""
    if fault_category_in_use(code=code):
        raise ValidationError(
            f'"{code}" is in use (GENERAL always is, as every new case starts there): '
            "move its cases to another category first."
        )
    FaultCategory.objects.filter(code=code).delete()
    fault_category_taxonomy_forget()


def _check_category(code: str) -> None:
    if not FaultCategory.objects.filter(code=code).exists():
        raise ValidationError(
            {"fault_category": f'"{code}" is not in the fault-category taxonomy.'}
        )


# --- Search ---------------------------------------------------------------------------

SEARCH_TOOL_NAME = "CaseLibrarySearch"
MAX_QUERY_LENGTH = 4000
DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 50


@dataclass(frozen=True)
class SearchOutcome:
    found: CasesFound
    # Set when the search was recorded on a session.
    invocation_id: str | None = None
    repeat: bool = False


def case_search(
    *,
    query: str,
    error_code: str | None = None,
    limit: int = DEFAULT_SEARCH_LIMIT,
    session_id: str | None = None,
) -> SearchOutcome:
    """Ask the case library "have we seen this before?".

    With a session, the search is a retrieval fact of that session like any other: its
    `tool_invocation` (CaseLibrarySearch, kind retrieval, the match level and hit count)
    is stored, so scoring counts an L0/L1 hit through the existing rules; the search is
    flagged as a repeat when the session already asked the same (normalised) question or
    got the same cases; and the cases found count the hit. A session that is not RUNNING
    is a conflict and nothing is recorded.
    """
    _check_search(query=query, error_code=error_code, limit=limit)
    if session_id is not None:
        _check_session_running(session_id)
    started = time.monotonic()
    found = cases_find(query=query, error_code=error_code, limit=limit)
    duration_ms = round((time.monotonic() - started) * 1000)
    metrics.case_search(found.match_level)
    if session_id is None:
        return SearchOutcome(found=found)
    return _record_search(
        session_id=session_id,
        query=query,
        error_code=error_code,
        found=found,
        duration_ms=duration_ms,
    )


def _check_search(*, query: str, error_code: str | None, limit: int) -> None:
    problems: dict[str, str] = {}
    if not isinstance(query, str) or not query.strip():
        problems["query"] = "Say what to search for: the query is empty."
    elif len(query) > MAX_QUERY_LENGTH:
        problems["query"] = f"At most {MAX_QUERY_LENGTH} characters."
    if error_code is not None and (not isinstance(error_code, str) or len(error_code) > 64):
        problems["errorCode"] = "At most 64 characters."
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        problems["limit"] = f"Between 1 and {MAX_SEARCH_LIMIT}."
    if problems:
        raise ValidationError(problems)


def _check_session_running(session_id: str) -> None:
    session = DiagnosisSession.objects.filter(session_id=session_id).only("session_id", "status")
    session = session.first()
    if session is None:
        raise SessionNotFound(session_id)
    if session.status != SessionStatus.RUNNING:
        raise SessionFinished(session)


def _record_search(
    *, session_id: str, query: str, error_code: str | None, found: CasesFound, duration_ms: int
) -> SearchOutcome:
    invocation_id = f"case-search-{uuid.uuid4().hex}"
    query_key = text_key(query)
    case_ids = found.case_ids
    with transaction.atomic():
        # Takes the session's row lock and checks it is still RUNNING: searches of one
        # session take turns, so the repeat check below sees every earlier one.
        invocations_record(
            session_id=session_id,
            invocations=[
                {
                    "invocation_id": invocation_id,
                    "tool_name": SEARCH_TOOL_NAME,
                    "kind": ToolKind.RETRIEVAL.value,
                    "status": InvocationStatus.SUCCESS.value,
                    "match_level": found.match_level,
                    "hit_count": len(case_ids),
                    "query": query,
                    "duration_ms": duration_ms,
                }
            ],
        )
        repeat_of = _earlier_same_search(session_id, query_key, case_ids)
        search = CaseSearch.objects.create(
            session_id=session_id,
            invocation_id=invocation_id,
            query=query,
            query_key=query_key,
            error_code=error_code or None,
            match_level=found.match_level,
            hit_count=len(case_ids),
            case_ids=case_ids,
            repeat_of_id=repeat_of,
            duration_ms=duration_ms,
        )
        CaseSearchHit.objects.bulk_create(
            CaseSearchHit(
                search=search,
                case_id=match.case.case_id,
                session_id=session_id,
                match_level=match.match_level,
                rank=rank,
            )
            for rank, match in enumerate(found.matches, start=1)
        )
        if repeat_of is None:
            _count_hits(found, search.created_at)
    logger.info(
        "case search recorded",
        extra={
            "session_id": session_id,
            "match_level": found.match_level,
            "hits": len(case_ids),
            "repeat": repeat_of is not None,
        },
    )
    return SearchOutcome(found=found, invocation_id=invocation_id, repeat=repeat_of is not None)


def _earlier_same_search(session_id: str, query_key: str, case_ids: list[str]) -> int | None:
    """The session's first search with the same question, or that found the same cases."""
    earlier = CaseSearch.objects.filter(session_id=session_id).order_by("id")
    for search_id, key, ids in earlier.values_list("id", "query_key", "case_ids"):
        if key == query_key or (case_ids and sorted(ids or []) == sorted(case_ids)):
            return search_id
    return None


def _count_hits(found: CasesFound, when: Any) -> None:
    """One more hit for each case found (a repeated recall is not counted again)."""
    if not found.matches:
        return
    levels = {m.case.case_id: m.match_level for m in found.matches}
    ids = sorted(levels)  # rows locked in key order: concurrent searches cannot deadlock
    CaseReuse.objects.bulk_create([CaseReuse(case_id=i) for i in ids], ignore_conflicts=True)
    l0 = [i for i in ids if levels[i] == L0] or [""]
    l1 = [i for i in ids if levels[i] == L1] or [""]
    CaseReuse.objects.filter(case_id__in=ids).update(
        l0_hits=F("l0_hits") + Case(When(case_id__in=l0, then=1), default=0),
        l1_hits=F("l1_hits") + Case(When(case_id__in=l1, then=1), default=0),
        last_hit_at=when,
    )


# --- Reuse outcomes ---------------------------------------------------------------------


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


# --- The search index ---------------------------------------------------------------------

INDEX_BATCH = 5_000
# The rebuild task, by name: the tasks module imports this one.
INDEX_TASK = "caselibrary.tasks.case_index_rebuild_task"
INDEX_GROUP = "case-index"


def case_index_request_rebuild() -> None:
    """Ask for the search index to be rebuilt, after the current transaction commits.

    Only the change that finds no rebuild pending enqueues one; a change made while a
    rebuild runs asks again, and that rebuild builds once more when it finishes.
    """
    transaction.on_commit(_request_rebuild, robust=True)


def _request_rebuild() -> None:
    # One UPDATE, the whole cost of a change while a rebuild is pending. The state row is
    # made by a migration (and again by the first read of the state after a flush).
    asked = CaseIndexState.objects.filter(id=1, requested_at__isnull=True).update(
        requested_at=timezone.now()
    )
    if asked:
        async_task(INDEX_TASK, group=INDEX_GROUP, timeout=settings.CASE_INDEX_BUILD_TIMEOUT)


def _as_datetime(value: Any) -> datetime | None:
    """A DATETIME column read by a raw query: SQLite gives its text, MySQL a naive UTC."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


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
        case_index_request_rebuild()
    return recounted


def case_index_rebuild() -> BuildResult | None:
    """Rebuild the search index if a rebuild is due and no other process is building.

    The body of the rebuild task. It claims the build with a conditional UPDATE, clears
    the request and builds; a change made while it builds asks again and is built in
    the same call, so a burst of changes costs at most two builds. None when another
    process holds the build (it sees the request when it finishes).
    """
    result = None
    while True:
        if not CaseIndexState.objects.filter(id=1, requested_at__isnull=False).exists():
            return result
        if not _claim_build():
            return result
        try:
            CaseIndexState.objects.filter(id=1).update(requested_at=None)
            result = _build_now()
        finally:
            CaseIndexState.objects.filter(id=1).update(building_since=None)


def case_index_build() -> BuildResult:
    """Build the index now, whatever was asked (the `case_index --build` command)."""
    if not _claim_build():
        raise ValidationError("Another process is building the case index right now.")
    try:
        CaseIndexState.objects.filter(id=1).update(requested_at=None)
        return _build_now()
    finally:
        CaseIndexState.objects.filter(id=1).update(building_since=None)


def _claim_build() -> bool:
    CaseIndexState.objects.get_or_create(id=1)
    now = timezone.now()
    stale = now - timedelta(seconds=settings.CASE_INDEX_BUILD_TIMEOUT)
    return bool(
        CaseIndexState.objects.filter(id=1)
        .filter(Q(building_since__isnull=True) | Q(building_since__lt=stale))
        .update(building_since=now)
    )


def _build_now() -> BuildResult:
    cases_structure_new()  # new cases' error codes are searched too
    result = build(_cases_in_key_order(), settings.CASE_INDEX_DIR)
    CaseIndexState.objects.filter(id=1).update(
        version=result.version,
        built_at=timezone.now(),
        cases=result.cases,
        build_seconds=round(result.seconds, 3),
    )
    logger.info(
        "case index built",
        extra={"version": result.version, "cases": result.cases, "seconds": result.seconds},
    )
    return result


def _cases_in_key_order() -> Iterator[CaseText]:
    # Keyset batches: a million cases never sit in memory as rows at once, and the order
    # (case_id) is the same on every database, so ties rank the same everywhere.
    last = ""
    while True:
        batch = list(
            CaseLibrary.objects.filter(case_id__gt=last)
            .order_by("case_id")
            .values_list("case_id", "title", "root_cause", "solution", "error_code")[:INDEX_BATCH]
        )
        if not batch:
            return
        for case_id, title, root_cause, solution, error_code in batch:
            yield CaseText(case_id, title, root_cause or "", solution or "", error_code)
        last = batch[-1][0]


def case_index_record_findability(*, report: dict[str, Any]) -> None:
    CaseIndexState.objects.get_or_create(id=1)
    CaseIndexState.objects.filter(id=1).update(findability=report)
