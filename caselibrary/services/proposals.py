"""The error code and fault category proposed for new AUTO cases, and applied to them."""

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from caselibrary import structuring
from caselibrary.models import (
    GENERAL_CATEGORY,
    SYSTEM_USER,
    CaseIndexState,
    CaseLibrary,
    CaseStructuring,
    SourceType,
)
from caselibrary.selectors import fault_category_taxonomy

logger = logging.getLogger(__name__)

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


def _as_datetime(value: Any) -> datetime | None:
    """A DATETIME column read by a raw query: SQLite gives its text, MySQL a naive UTC."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value
