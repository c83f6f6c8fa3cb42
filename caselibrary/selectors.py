"""Reads of the case library."""

from django.db.models import QuerySet

from caselibrary.models import (
    GENERAL_CATEGORY,
    TITLE_FROM_QUERY_LENGTH,
    CaseLibrary,
    FaultCategory,
)
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
