"""Writes to the case library. This module owns the case table.

Every write records who made it (`created_by` / `updated_by`): `system` for cases made
from feedback, the operator's username for edits in the admin.
"""

from collections.abc import Collection
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from caselibrary import structuring
from caselibrary.models import (
    GENERAL_CATEGORY,
    SYSTEM_USER,
    TITLE_FROM_QUERY_LENGTH,
    CaseLibrary,
    FaultCategory,
    SourceType,
)
from caselibrary.selectors import (
    fault_category_in_use,
    fault_category_taxonomy,
    fault_category_taxonomy_forget,
)
from diagnosis.fields import new_uuid_string

EDITABLE_FIELDS = frozenset(
    {"fault_category", "error_code", "title", "root_cause", "solution", "diagnosis_id"}
)


_COPY_FROM_SESSION = (
    "INSERT INTO case_library (case_id, diagnosis_id, source_type, fault_category, "
    "error_code, title, root_cause, solution, created_by, updated_by, created_at, updated_at) "
    "SELECT %s, session_id, %s, %s, %s, SUBSTR(query, 1, %s), answer, answer, %s, %s, %s, %s "
    "FROM diagnosis_session WHERE session_id = %s "
    "AND NOT EXISTS (SELECT 1 FROM case_library WHERE diagnosis_id = %s)"
)
# The opening of the question and answer, all the structuring reads.
_TEXT_TO_STRUCTURE = (
    "SELECT SUBSTR(query, 1, %s), SUBSTR(answer, 1, %s) FROM diagnosis_session "
    "WHERE session_id = %s"
)
_RECORD_PROPOSAL = (
    "INSERT INTO case_structuring (case_id, proposed_category, proposed_error_code, method, "
    "proposed_at) VALUES (%s, %s, %s, %s, %s)"
)


def case_copy_from_session(*, session_id: str) -> str:
    """The session's case id, inserting its AUTO case first if it has none.

    The case SPEC §4 lists (AUTO, the title the first 100 characters of the question,
    root cause and solution the whole answer, made by `system`), with its error code and
    fault category proposed by caselibrary/structuring.py from the opening of the
    question and answer (GENERAL when no keyword matches), and the proposal recorded in
    case_structuring. The answer itself is copied inside the database (SUBSTR counts
    characters as Python's slice does): only its first ANSWER_CHARS travel to the
    process, never back. For a caller holding the session's row lock in its transaction
    (feedback does); a case inserted meanwhile by someone not taking that lock is an
    IntegrityError for the caller to retry.
    """
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    case_id = new_uuid_string()
    with connection.cursor() as cursor:
        cursor.execute(
            _TEXT_TO_STRUCTURE, [structuring.QUESTION_CHARS, structuring.ANSWER_CHARS, session_id]
        )
        text = cursor.fetchone()
        proposal = structuring.propose(
            query=text[0] if text else "",
            answer=text[1] if text else "",
            taxonomy=fault_category_taxonomy(),
            default_category=GENERAL_CATEGORY,
        )
        cursor.execute(
            _COPY_FROM_SESSION,
            [
                case_id,
                SourceType.AUTO.value,
                proposal.fault_category,
                proposal.error_code,
                TITLE_FROM_QUERY_LENGTH,
                SYSTEM_USER,
                SYSTEM_USER,
                now,
                now,
                session_id,
                session_id,
            ],
        )
        if cursor.rowcount == 1:
            cursor.execute(
                _RECORD_PROPOSAL,
                [
                    case_id,
                    proposal.fault_category,
                    proposal.error_code,
                    structuring.METHOD_VERSION,
                    now,
                ],
            )
            return case_id
        # It had one already (useful, not_useful, then useful again; or made by hand).
        cursor.execute("SELECT case_id FROM case_library WHERE diagnosis_id = %s", [session_id])
        row = cursor.fetchone()
    if row is None:
        raise CaseLibrary.DoesNotExist(f"no session {session_id!r} to copy a case from")
    return row[0]


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
        error_code=error_code or None,
        diagnosis_id=diagnosis_id or None,
        created_by=created_by,
        updated_by=created_by,
    )
    _check_category(case.fault_category)
    case.full_clean()
    case.save(force_insert=True)
    return case


def case_update(*, case: CaseLibrary, updated_by: str, **changes: Any) -> CaseLibrary:
    """Apply an operator's edits and record who made them."""
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise ValidationError({name: "This field cannot be edited." for name in sorted(unknown)})
    for name, value in changes.items():
        setattr(case, name, value)
    if "fault_category" in changes:
        _check_category(case.fault_category)
    case.updated_by = updated_by
    case.full_clean()
    case.save(update_fields=[*changes, "updated_by", "updated_at"])
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
