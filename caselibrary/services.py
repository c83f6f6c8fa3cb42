"""Writes to the case library. This module owns the case table.

Every write records who made it (`created_by` / `updated_by`): `system` for cases made
from feedback, the operator's username for edits in the admin.
"""

from collections.abc import Collection
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from caselibrary.models import (
    GENERAL_CATEGORY,
    SYSTEM_USER,
    TITLE_FROM_QUERY_LENGTH,
    CaseLibrary,
    FaultCategory,
    SourceType,
)
from caselibrary.selectors import fault_category_in_use
from diagnosis.fields import new_uuid_string

EDITABLE_FIELDS = frozenset(
    {"fault_category", "error_code", "title", "root_cause", "solution", "diagnosis_id"}
)


_COPY_FROM_SESSION = (
    "INSERT INTO case_library (case_id, diagnosis_id, source_type, fault_category, title, "
    "root_cause, solution, created_by, updated_by, created_at, updated_at) "
    "SELECT %s, session_id, %s, %s, SUBSTR(query, 1, %s), answer, answer, %s, %s, %s, %s "
    "FROM diagnosis_session WHERE session_id = %s "
    "AND NOT EXISTS (SELECT 1 FROM case_library WHERE diagnosis_id = %s)"
)


def case_copy_from_session(*, session_id: str) -> str:
    """The session's case id, inserting its AUTO case first if it has none.

    The case SPEC §4 lists (AUTO, GENERAL, the title the first 100 characters of the
    question, root cause and solution the whole answer, made by `system`), copied inside
    the database (SUBSTR counts characters as Python's slice does), so the question and
    answer never travel to the process and back. For a caller holding the session's row
    lock in its transaction (feedback does); a case inserted meanwhile by someone not
    taking that lock is an IntegrityError for the caller to retry.
    """
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    case_id = new_uuid_string()
    with connection.cursor() as cursor:
        cursor.execute(
            _COPY_FROM_SESSION,
            [
                case_id,
                SourceType.AUTO.value,
                GENERAL_CATEGORY,
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


def fault_category_save(*, code: str, name: str, description: str = "") -> FaultCategory:
    """Add a category to the taxonomy, or rename/redescribe one (its code is its key)."""
    category = FaultCategory(code=code, name=name, description=description)
    category.full_clean(validate_unique=False)
    category.save()
    return category


def fault_category_delete(*, code: str) -> None:
    """Drop a category no case uses; GENERAL, where every AUTO case starts, stays."""
    if fault_category_in_use(code=code):
        raise ValidationError(
            f'"{code}" is in use (GENERAL always is, as every new case starts there): '
            "move its cases to another category first."
        )
    FaultCategory.objects.filter(code=code).delete()


def _check_category(code: str) -> None:
    if not FaultCategory.objects.filter(code=code).exists():
        raise ValidationError(
            {"fault_category": f'"{code}" is not in the fault-category taxonomy.'}
        )
