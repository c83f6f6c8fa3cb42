"""Reads of the case library."""

import threading
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.db import connection
from django.db.models import QuerySet

from caselibrary.models import (
    GENERAL_CATEGORY,
    SYSTEM_USER,
    TITLE_FROM_QUERY_LENGTH,
    CaseLibrary,
    FaultCategory,
    SourceType,
)
from caselibrary.structuring import Taxonomy, taxonomy_of
from config.api import NotFound
from diagnosis.models import DiagnosisSession


class CaseNotFound(NotFound):
    def __init__(self, case_id: str) -> None:
        super().__init__(f'Case "{case_id}" does not exist.')


def case_list() -> QuerySet[CaseLibrary]:
    return CaseLibrary.objects.all()


def case_get(*, case_id: str) -> CaseLibrary:
    try:
        return CaseLibrary.objects.get(case_id=case_id)
    except CaseLibrary.DoesNotExist:
        raise CaseNotFound(case_id) from None


def case_id_for_session(*, session_id: str) -> str | None:
    """The case made from a session, if there is one (the unique key allows one)."""
    return (
        CaseLibrary.objects.filter(diagnosis_id=session_id)
        .values_list("case_id", flat=True)
        .first()
    )


def case_draft_from_session(*, session_id: str) -> dict[str, str] | None:
    """What a MANUAL case made from a session starts with; None if there is no session.

    The same title and texts an AUTO case gets, so the operator only edits what differs.
    """
    session = (
        DiagnosisSession.objects.filter(session_id=session_id)
        .only("session_id", "query", "answer")
        .first()
    )
    if session is None:
        return None
    return {
        "diagnosis": session.session_id,
        "title": session.query[:TITLE_FROM_QUERY_LENGTH],
        "root_cause": session.answer or "",
        "solution": session.answer or "",
    }


def fault_category_choices() -> list[tuple[str, str]]:
    """The taxonomy as (code, "CODE · name") pairs, in code order."""
    return [(c.code, str(c)) for c in FaultCategory.objects.all()]


def fault_category_in_use(*, code: str) -> bool:
    """GENERAL always is: every automatic case starts there."""
    return code == GENERAL_CATEGORY or CaseLibrary.objects.filter(fault_category=code).exists()


# --- Structuring ----------------------------------------------------------------------

# Seconds a process keeps the taxonomy's compiled keywords: `useful` reads no taxonomy
# row per request, and a keyword edited in the admin applies within this time in every
# process (at once in the process that saved it).
TAXONOMY_CACHE_SECONDS = 60
_taxonomy: tuple[float, Taxonomy] | None = None
_taxonomy_lock = threading.Lock()


def fault_category_taxonomy() -> Taxonomy:
    """The categories' keywords, compiled, GENERAL left out (it is where no match lands)."""
    global _taxonomy
    cached = _taxonomy
    if cached is not None and time.monotonic() - cached[0] < TAXONOMY_CACHE_SECONDS:
        return cached[1]
    with _taxonomy_lock:
        rows = list(FaultCategory.objects.values_list("code", "keywords"))
        taxonomy = taxonomy_of(rows, exclude=GENERAL_CATEGORY)
        _taxonomy = (time.monotonic(), taxonomy)
    return taxonomy


def fault_category_taxonomy_forget() -> None:
    global _taxonomy
    _taxonomy = None


@dataclass(frozen=True)
class StructuringAccuracy:
    """How often operators kept what the automatic structuring proposed.

    Over AUTO cases with a recorded proposal that an operator has saved since
    (`updated_by` is not `system`): `category_kept` of them still have the proposed
    category, `code_kept` the proposed error code (both empty counts as kept; compared
    trimmed and case-insensitively).
    """

    proposed: int
    reviewed: int
    category_kept: int
    code_kept: int

    @property
    def category_rate(self) -> float | None:
        return self.category_kept / self.reviewed if self.reviewed else None

    @property
    def code_rate(self) -> float | None:
        return self.code_kept / self.reviewed if self.reviewed else None


_ACCURACY = """
    SELECT
        COUNT(*),
        COUNT(CASE WHEN c.updated_by <> %s THEN 1 END),
        COUNT(CASE WHEN c.updated_by <> %s AND c.fault_category = s.proposed_category
              THEN 1 END),
        COUNT(CASE WHEN c.updated_by <> %s
              AND UPPER(TRIM(COALESCE(c.error_code, ''))) =
                  UPPER(TRIM(COALESCE(s.proposed_error_code, '')))
              THEN 1 END)
    FROM case_structuring s
    JOIN case_library c ON c.case_id = s.case_id
    WHERE c.source_type = %s
"""


ACCURACY_CACHE_SECONDS = 60


def case_structuring_accuracy() -> StructuringAccuracy:
    """One aggregate over the proposals and their cases, cached for a minute (the
    overview page is opened often; the numbers move slowly)."""
    return cache.get_or_set("case-structuring-accuracy", _accuracy, ACCURACY_CACHE_SECONDS)


def _accuracy() -> StructuringAccuracy:
    with connection.cursor() as cursor:
        cursor.execute(_ACCURACY, [SYSTEM_USER, SYSTEM_USER, SYSTEM_USER, SourceType.AUTO.value])
        proposed, reviewed, category_kept, code_kept = (int(v or 0) for v in cursor.fetchone())
    return StructuringAccuracy(
        proposed=proposed, reviewed=reviewed, category_kept=category_kept, code_kept=code_kept
    )
