"""Making, editing and deleting cases."""

from collections.abc import Collection
from functools import partial
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from caselibrary.error_codes import normalise_error_code
from caselibrary.models import (
    GENERAL_CATEGORY,
    SYSTEM_USER,
    CaseLibrary,
    FaultCategory,
    SourceType,
    title_from_query,
)
from caselibrary.selectors import case_id_for_session
from caselibrary.services.index import case_index_request
from config import metrics
from config.api import Conflict, shows_words
from diagnosis.exceptions import SessionNotFound
from diagnosis.models import DiagnosisSession, SessionStatus

EDITABLE_FIELDS = frozenset(
    {"fault_category", "error_code", "title", "root_cause", "solution", "diagnosis_id"}
)
# What the search index reads: a change to any of these asks for a rebuild.
INDEXED_FIELDS = frozenset({"error_code", "title", "root_cause", "solution"})


class SessionAlreadyHasCase(Conflict):
    def __init__(self, *, session_id: str, case_id: str | None) -> None:
        super().__init__(
            f'会话 "{session_id}" 已有案例 "{case_id}"，一个会话只能有一个案例；请编辑该案例'
            if case_id
            else f'会话 "{session_id}" 已有案例，一个会话只能有一个案例'
        )


class SessionCannotBecomeCase(Conflict):
    def __init__(self, session_id: str) -> None:
        super().__init__(
            f'会话 "{session_id}" 还没有回答（仍在执行中，或没有回答），不能成为案例；'
            "只有已结束且有回答的会话才能成为案例"
        )


def session_can_become_case(*, session: DiagnosisSession, needs_answer: bool = True) -> bool:
    """Only a finished session with an answer has the text a case is made of; one written
    with other words (a reader's correction) needs no answer of the session.

    A case made from a running session would be a placeholder: once the session ends,
    `useful` finds that case instead of making one from the real answer.
    """
    finished = session.status != SessionStatus.RUNNING
    return finished and (not needs_answer or shows_words(session.answer))


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
        title=title_from_query(session.query, session.session_id),
        root_cause=session.answer,
        solution=session.answer,
        created_by=SYSTEM_USER,
        updated_by=SYSTEM_USER,
    )
    transaction.on_commit(partial(metrics.case_created, SourceType.AUTO.value), robust=True)
    case_index_request()
    return case


def case_create_manual(
    *,
    created_by: str,
    title: str,
    root_cause: str,
    solution: str,
    fault_category: str = GENERAL_CATEGORY,
    error_code: str | None = None,
    diagnosis_id: str | None = None,
    of_a_correction: bool = False,
) -> CaseLibrary:
    """A case an operator writes, from scratch or prefilled from a session.

    A session that does not exist is SessionNotFound; one still running or without an
    answer is SessionCannotBecomeCase; one that already has a case is
    SessionAlreadyHasCase, and the unique key decides between concurrent creates. A case
    `of_a_correction` is written with a reader's correction, not the session's answer:
    a finished session without one (a failed run) may have it.
    """
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
    # The source session is checked below, as a 404 or 409 rather than a field error.
    case.full_clean(exclude=["diagnosis"])
    try:
        with transaction.atomic():
            _check_category(case.fault_category)
            if case.diagnosis_id is not None:
                # Under the session's lock, as `useful` makes its case: a retention purge
                # deleting the session meanwhile is waited for (and the session is gone).
                _check_session_is_free(case.diagnosis_id, needs_answer=not of_a_correction)
            case.save(force_insert=True)
    except IntegrityError:
        if case.diagnosis_id is None:
            raise
        # Lost a race with another case for the same session: the unique key decided.
        raise SessionAlreadyHasCase(
            session_id=case.diagnosis_id,
            case_id=case_id_for_session(session_id=case.diagnosis_id),
        ) from None
    case_index_request()
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
    case.updated_by = updated_by
    case.full_clean()
    with transaction.atomic():
        if "fault_category" in changes:
            _check_category(case.fault_category)
        case.save(update_fields=[*changes, "updated_by", "updated_at"])
    if changes.keys() & INDEXED_FIELDS:
        case_index_request()
    return case


def case_fields_for_update(*, case_id: str, fields: Collection[str]) -> dict[str, Any] | None:
    """The case's `fields` as stored now, its row locked until the caller's transaction
    ends (None if the case is gone).

    An editor that compares them with the values its page showed, and then saves in the
    same transaction, writes over no colleague's save it has not seen.
    """
    with transaction.atomic():  # outside a transaction, the lock would be an error
        return (
            CaseLibrary.objects.select_for_update().filter(case_id=case_id).values(*fields).first()
        )


def cases_set_category(*, case_ids: Collection[str], fault_category: str, updated_by: str) -> int:
    """Bulk "set category"; returns how many cases changed."""
    with transaction.atomic():
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
        case_index_request()
    return deleted


def _check_session_is_free(session_id: str, *, needs_answer: bool = True) -> None:
    session = (
        DiagnosisSession.objects.select_for_update()
        .filter(session_id=session_id)
        .only("status", "answer")
        .first()
    )
    if session is None:
        raise SessionNotFound(session_id)
    if not session_can_become_case(session=session, needs_answer=needs_answer):
        raise SessionCannotBecomeCase(session_id)
    case_id = case_id_for_session(session_id=session_id)
    if case_id is not None:
        raise SessionAlreadyHasCase(session_id=session_id, case_id=case_id)


def _check_category(code: str) -> None:
    """The category's row locked until the caller's transaction ends: a delete of it
    (fault_category_delete, which locks it first) waits, then finds it in use."""
    # Compared here too: MariaDB's collation finds "GENERAL" for "general" or "GÉNÉRAL".
    found = FaultCategory.objects.select_for_update().filter(code=code)
    if code not in found.values_list("code", flat=True):
        raise ValidationError(
            {"fault_category": f'"{code}" is not in the fault-category taxonomy.'}
        )
