"""A search of the case library, recorded on the session that asked."""

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connections, transaction
from django.db.models import Case, F, When

from caselibrary.models import CaseReuse, CaseSearch, CaseSearchHit
from caselibrary.search_engine import L0, L1
from caselibrary.search_text import text_key, vocabulary_size
from caselibrary.selectors import CasesFound, cases_find
from config import metrics
from config.failure_log import RepeatedFailures
from diagnosis.models import DiagnosisSession, InvocationStatus, SessionStatus, ToolKind
from diagnosis.services import SessionFinished, SessionNotFound, invocations_record

logger = logging.getLogger(__name__)

SEARCH_TOOL_NAME = "CaseLibrarySearch"
MAX_QUERY_LENGTH = 4000
DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 50
WARM_UP_QUERY = "warm-up"
# While the index (or the model) is out, every search answers degraded: a process logs
# one line a minute, saying how many it did not log (config/failure_log.py), and one
# when its searches answer whole again.
DEGRADED_LOG_SECONDS = 60.0
_degraded = RepeatedFailures()


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
    explain: bool = False,
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
    found = cases_find(query=query, error_code=error_code, limit=limit, explain=explain)
    duration_ms = round((time.monotonic() - started) * 1000)
    _log_degraded(found)
    metrics.case_search(found.match_level, degraded=found.degraded, embed_ms=found.embed_ms)
    if session_id is None:
        return SearchOutcome(found=found)
    return _record_search(
        session_id=session_id,
        query=query,
        error_code=error_code,
        found=found,
        duration_ms=duration_ms,
    )


def _log_degraded(found: CasesFound) -> None:
    if not found.degraded:
        for _what, more in _degraded.over().items():
            logger.warning(
                "case search answers with its index again (%d more degraded searches "
                "since the last line)",
                more,
            )
        return
    more = _degraded.failed("search", every=DEGRADED_LOG_SECONDS)
    if more is None:
        return
    if more:
        logger.warning(
            "case search degraded: %s (%d more degraded searches since the last line)",
            found.degraded_by,
            more,
        )
    else:
        logger.warning("case search degraded: %s", found.degraded_by)


def search_warm() -> float:
    """Ask the library one question, recording nothing: what a search needs is loaded
    by it (the embedding model; with the database backend every passage's vector and, on
    MariaDB/MySQL, its terms). Returns the seconds it took."""
    started = time.monotonic()
    cases_find(query=WARM_UP_QUERY, limit=1)
    vocabulary_size()  # read by a question with a lower-case word no case holds
    return time.monotonic() - started


def search_warm_in_background() -> threading.Thread:
    """`search_warm` in a thread of its own (a web worker that has just started): the
    worker answers meanwhile, and a search that comes first waits for the same load."""

    def warm() -> None:
        try:
            logger.info("case search warm in %.1f s", search_warm())
        except Exception:
            logger.exception("case search warm-up failed: the first search loads it")
        finally:
            connections.close_all()  # this thread's own

    thread = threading.Thread(target=warm, name="case-search-warm-up", daemon=True)
    thread.start()
    return thread


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


SEARCH_REFUSED = "用它检索案例库（检索记作该会话的工具调用）；不带 sessionId 可以检索而不记录"


def _check_session_running(session_id: str) -> None:
    session = DiagnosisSession.objects.filter(session_id=session_id).only("session_id", "status")
    session = session.first()
    if session is None:
        raise SessionNotFound(session_id)
    if session.status != SessionStatus.RUNNING:
        raise SessionFinished(session, doing=SEARCH_REFUSED)


def _record_search(
    *, session_id: str, query: str, error_code: str | None, found: CasesFound, duration_ms: int
) -> SearchOutcome:
    invocation_id = f"case-search-{uuid.uuid4().hex}"
    query_key = text_key(query)
    case_ids = found.case_ids
    with transaction.atomic():
        # Takes the session's row lock and checks it is still RUNNING: searches of one
        # session take turns, so the repeat check below sees every earlier one.
        try:
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
        except SessionFinished as finished:
            # Completed while the search ran.
            raise SessionFinished(finished.session, doing=SEARCH_REFUSED) from None
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
    """One more hit for each case found (a repeated recall is not counted again).

    Counted after the search's transaction, each statement on its own: the INSERT IGNORE
    of the missing rows takes a shared lock on each row already there, and an UPDATE in
    the same transaction then wanted it exclusive, so two searches that found the same
    case each waited for the other's shared lock (a deadlock, whatever the order: 3% of
    searches answered 503 at 2 threads on MariaDB, 21% at 8). Committed alone, the insert
    lets its locks go before the update, which locks its rows in key order: concurrent
    searches wait for each other and never deadlock."""
    if not found.matches:
        return
    levels = {m.case.case_id: m.match_level for m in found.matches}
    ids = sorted(levels)
    CaseReuse.objects.bulk_create([CaseReuse(case_id=i) for i in ids], ignore_conflicts=True)
    l0 = [i for i in ids if levels[i] == L0] or [""]
    l1 = [i for i in ids if levels[i] == L1] or [""]
    CaseReuse.objects.filter(case_id__in=ids).update(
        l0_hits=F("l0_hits") + Case(When(case_id__in=l0, then=1), default=0),
        l1_hits=F("l1_hits") + Case(When(case_id__in=l1, then=1), default=0),
        last_hit_at=when,
    )
