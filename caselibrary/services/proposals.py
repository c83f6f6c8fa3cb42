"""The error code and fault category proposed for new AUTO cases, and applied to them."""

import logging
from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models.functions import Substr
from django.utils import timezone

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
        # AUTO cases not yet structured (no proposal) among those made since `since`
        # whose session is stored, with the opening of its question and answer.
        rows = list(
            CaseLibrary.objects.filter(
                source_type=SourceType.AUTO,
                created_by=SYSTEM_USER,
                created_at__gte=since,
                structuring__isnull=True,
                diagnosis__query__isnull=False,
            )
            .order_by("created_at", "case_id")
            .values_list(
                "case_id",
                "created_at",
                Substr("diagnosis__query", 1, structuring.QUESTION_CHARS),
                Substr("diagnosis__answer", 1, structuring.ANSWER_CHARS),
            )[:STRUCTURING_BATCH]
        )
        for case_id, created_at, query, answer in rows:
            proposal = structuring.propose(
                query=query or "",
                answer=answer or "",
                taxonomy=taxonomy,
                default_category=GENERAL_CATEGORY,
            )
            at = timezone.now()
            try:
                with transaction.atomic():
                    # The proposal first: its key lets one pass structure a case.
                    CaseStructuring.objects.create(
                        case_id=case_id,
                        proposed_category=proposal.fault_category,
                        proposed_error_code=proposal.error_code,
                        method=structuring.METHOD_VERSION,
                        proposed_at=at,
                    )
                    CaseLibrary.objects.filter(case_id=case_id, updated_by=SYSTEM_USER).update(
                        fault_category=proposal.fault_category,
                        error_code=proposal.error_code,
                        updated_at=at,
                    )
            except IntegrityError:
                continue  # another worker's pass took it
            newest = created_at if newest is None else max(newest, created_at)
            structured += 1
        if len(rows) < STRUCTURING_BATCH:
            break
    if newest is not None and newest != state.structured_until:
        CaseIndexState.objects.filter(id=1).update(structured_until=newest)
    if structured:
        logger.info("cases structured", extra={"cases": structured})
    return structured
