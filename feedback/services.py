"""Users' feedback on an answer (`useful` makes a case, `not_useful` marks a bad case),
and operators' review of the bad cases."""

import logging
from collections.abc import Collection
from dataclasses import dataclass
from functools import partial

from django.core.exceptions import ValidationError
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from caselibrary.models import CaseLibrary
from caselibrary.selectors import case_id_for_session
from caselibrary.services import case_copy_from_session, case_copy_made, case_copy_statements
from config import metrics
from config.api import Conflict, NotFound
from config.db import Statement, run_after_commit, run_in_one_transaction
from diagnosis.models import DiagnosisSession, Feedback, SessionStatus
from feedback.models import BadCase, BadCaseReview, ReviewState

logger = logging.getLogger(__name__)

MYSQL_DEADLOCK = 1213
MYSQL_LOCK_WAIT_TIMEOUT = 1205

SESSION_NOT_FOUND = "会话不存在"
SESSION_STILL_RUNNING = "会话仍在执行中，执行结束后才能反馈"
SESSION_HAS_NO_ANSWER = "会话没有答案，不能标记为 useful"


_FEEDBACK_VALUES = frozenset(Feedback.values)


class FeedbackSessionNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__(SESSION_NOT_FOUND)


class FeedbackConflict(Conflict):
    pass


@dataclass(frozen=True)
class FeedbackResult:
    session_id: str
    feedback: str
    case_id: str | None
    changed: bool


def feedback_submit(*, session_id: str, feedback: str) -> FeedbackResult:
    """Record `useful` / `not_useful` for a finished session; the last write wins.

    `useful` also makes the session's case (once: a repeat returns the same caseId).
    `status` is never touched. Repeating the value a session already has changes nothing,
    not even `feedback_at`. Concurrent requests take turns on the session row; should
    the case insert still collide or deadlock, it is retried once and the winner read.
    """
    if feedback not in _FEEDBACK_VALUES:
        raise ValueError(f"unknown feedback {feedback!r}")
    try:
        return _submit(session_id, feedback)
    except (IntegrityError, OperationalError) as exc:
        if isinstance(exc, OperationalError) and _mysql_code(exc) not in (
            MYSQL_DEADLOCK,
            MYSQL_LOCK_WAIT_TIMEOUT,
        ):
            raise
        logger.warning(
            "feedback retried after %s", exc.__class__.__name__, extra={"session_id": session_id}
        )
        # The retry reads under the session's lock: whatever made the first try collide
        # (a case made meanwhile) is then seen rather than collided with again.
        return _submit(session_id, feedback, shortcut=False)


def _submit(session_id: str, feedback: str, *, shortcut: bool = True) -> FeedbackResult:
    result = None
    if feedback == Feedback.NOT_USEFUL:
        result = _not_useful_in_one_update(session_id)
    elif shortcut:
        result = _useful_in_one_transaction(session_id)
    if result is None:
        result = _submit_locked(session_id, feedback)
    logger.info(
        "feedback recorded",
        extra={
            "session_id": session_id,
            "feedback": feedback,
            "changed": result.changed,
            "case_id": result.case_id,
        },
    )
    return result


# The session, if feedback may be recorded on it (finished) and the value would change
# it. Parameters: the session id and the value.
_IF_IT_CHANGES = (
    f"session_id = %s AND status <> '{SessionStatus.RUNNING.value}' "
    "AND (feedback IS NULL OR feedback <> %s)"
)


def _set_feedback(feedback: str, where: str, params: list) -> int:
    """Record `feedback` and its time on the session rows `where` picks; how many changed."""
    with connection.cursor() as cursor:
        cursor.execute(*_feedback_update(feedback, where, params))
        return cursor.rowcount


def _feedback_update(feedback: str, where: str, params: list) -> Statement:
    """The UPDATE of `_set_feedback`. Written out: building it through the ORM cost a
    third of a not_useful request."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    # `where` is one of this module's constants, never input.
    sql = "UPDATE diagnosis_session SET feedback = %s, feedback_at = %s, updated_at = %s WHERE "
    return sql + where, [feedback, now, now, *params]


def _not_useful_in_one_update(session_id: str) -> FeedbackResult | None:
    """not_useful as one conditional UPDATE (the rules are in its WHERE clause).

    The hot path of the bad-case button: one statement, no transaction to open, the row
    locked only for the UPDATE itself. When nothing matched, one read says why; None
    when the row changed in between, and the caller takes the locked path.
    """
    updated = _set_feedback(Feedback.NOT_USEFUL, _IF_IT_CHANGES, [session_id, Feedback.NOT_USEFUL])
    if updated:
        transaction.on_commit(partial(metrics.feedback_recorded, Feedback.NOT_USEFUL))
        return FeedbackResult(
            session_id=session_id, feedback=Feedback.NOT_USEFUL, case_id=None, changed=True
        )
    row = (
        DiagnosisSession.objects.filter(session_id=session_id)
        .values_list("status", "feedback")
        .first()
    )
    if row is None:
        raise FeedbackSessionNotFound()
    status, current = row
    if status == SessionStatus.RUNNING:
        raise FeedbackConflict(SESSION_STILL_RUNNING)
    if current == Feedback.NOT_USEFUL:
        return FeedbackResult(
            session_id=session_id, feedback=Feedback.NOT_USEFUL, case_id=None, changed=False
        )
    return None


# Every character Python's str.strip() removes (str.isspace) as a regular-expression
# class: an answer with any other character is not blank. The characters themselves, not
# regex escapes, so the pattern means the same to MariaDB/MySQL (PCRE) and to SQLite
# (Python's re, which Django registers as REGEXP).
NOT_BLANK = "[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


# A case is copied from a session rated useful, finished, with an answer. Parameter:
# NOT_BLANK.
_CASE_WANTED = (
    f"feedback = '{Feedback.USEFUL.value}' AND status <> '{SessionStatus.RUNNING.value}' "
    "AND answer REGEXP %s"
)


def _useful_in_one_transaction(session_id: str) -> FeedbackResult | None:
    """A session's useful as one transaction in one round trip on MySQL/MariaDB
    (config/db.py): the conditional UPDATE (the rules in its WHERE clause) and the case
    copied from the row in SQL where it is wanted and missing.

    The UPDATE holds the session's row lock until the commit, so no other feedback
    request can make the case in between. The insert's own conditions keep it from
    writing anything the UPDATE refused (an unknown or running session, no answer), and
    let a repeat make again a case an operator had deleted. When the UPDATE matched
    nothing and no case was made, one read says why (a repeat, an unknown or running
    session, no answer). None when the session changed in between: the caller takes the
    locked path.
    """
    update, *copy = run_in_one_transaction(
        [
            _feedback_update(
                Feedback.USEFUL,
                f"{_IF_IT_CHANGES} AND answer REGEXP %s",
                [session_id, Feedback.USEFUL, NOT_BLANK],
            ),
            *case_copy_statements(session_id, when=_CASE_WANTED, when_params=[NOT_BLANK]),
        ]
    )
    changed = update.rowcount == 1
    case_id = case_copy_made(copy)
    if case_id is None and not changed:
        return _why_useful_changed_nothing(session_id)
    if case_id is None:
        # Recorded; the session had its case (useful, not_useful, then useful again).
        case_id = case_id_for_session(session_id=session_id)
        if case_id is None:
            return None
    if changed:
        run_after_commit(partial(metrics.feedback_recorded, Feedback.USEFUL))
    return FeedbackResult(
        session_id=session_id, feedback=Feedback.USEFUL, case_id=case_id, changed=changed
    )


# After a useful that changed nothing: the session's status, feedback, whether its answer
# is not blank, and its case. Parameters: NOT_BLANK and the session id.
_USEFUL_STATE = (
    "SELECT s.status, s.feedback, s.answer REGEXP %s, c.case_id FROM diagnosis_session s "
    "LEFT JOIN case_library c ON c.diagnosis_id = s.session_id WHERE s.session_id = %s"
)


def _why_useful_changed_nothing(session_id: str) -> FeedbackResult | None:
    """A repeat (the session's case, unchanged), or the refusal of an unknown session, a
    running one or one without an answer; None when the session changed in between."""
    with connection.cursor() as cursor:
        cursor.execute(_USEFUL_STATE, [NOT_BLANK, session_id])
        row = cursor.fetchone()
    if row is None:
        raise FeedbackSessionNotFound()
    status, feedback, has_answer, case_id = row
    if status == SessionStatus.RUNNING:
        raise FeedbackConflict(SESSION_STILL_RUNNING)
    if not has_answer:
        raise FeedbackConflict(SESSION_HAS_NO_ANSWER)
    if feedback != Feedback.USEFUL or case_id is None:
        return None
    return FeedbackResult(
        session_id=session_id, feedback=Feedback.USEFUL, case_id=case_id, changed=False
    )


def _submit_locked(session_id: str, feedback: str) -> FeedbackResult:
    with transaction.atomic():
        return _decide_locked(session_id, feedback)


def _decide_locked(session_id: str, feedback: str) -> FeedbackResult:
    """Read the session under its row lock and record the feedback; inside a transaction."""
    useful = feedback == Feedback.USEFUL
    session = _lock(session_id, with_content=useful)
    if session.status == SessionStatus.RUNNING:
        raise FeedbackConflict(SESSION_STILL_RUNNING)
    if useful and not (session.answer or "").strip():
        raise FeedbackConflict(SESSION_HAS_NO_ANSWER)
    changed = session.feedback != feedback
    if changed:
        _set_feedback(feedback, "id = %s", [session.pk])
    case_id = None
    if useful:
        # The lock read the case too: under the session's row lock no other feedback
        # request can make it, so a missing one is inserted without a savepoint (a
        # case that appears anyway is an IntegrityError, retried by the caller).
        if _has_case(session):
            case_id = session.case.case_id
        else:
            case_id = case_copy_from_session(session_id=session_id)
    if changed:
        transaction.on_commit(partial(metrics.feedback_recorded, feedback))
    return FeedbackResult(
        session_id=session_id, feedback=feedback, case_id=case_id, changed=changed
    )


def _lock(session_id: str, *, with_content: bool) -> DiagnosisSession:
    # The answer (LONGTEXT, to tell whether it is blank) is only read when a case is to
    # be made, and the case (one LEFT JOIN) only then; the case itself is copied in SQL.
    fields = ["id", "session_id", "status", "feedback"]
    queryset = DiagnosisSession.objects.select_for_update()
    if with_content:
        fields += ["answer", "case__case_id"]
        queryset = queryset.select_related("case")
    try:
        return queryset.only(*fields).get(session_id=session_id)
    except DiagnosisSession.DoesNotExist:
        raise FeedbackSessionNotFound() from None


def _has_case(session: DiagnosisSession) -> bool:
    try:
        session.case  # noqa: B018 - read from the select_related cache, no query
    except CaseLibrary.DoesNotExist:
        return False
    return True


def _mysql_code(exc: Exception) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


# --- Bad-case review ------------------------------------------------------------------

MARK_BATCH = 1000


def bad_case_review_save(*, session_id: str, state: str, note: str, reviewer: str) -> BadCaseReview:
    """Record an operator's review of one bad case, with who made it and when."""
    _check_review_state(state)
    if not BadCase.objects.filter(session_id=session_id).exists():
        raise ValidationError(f'Session "{session_id}" is not a bad case (feedback not_useful).')
    review, _ = BadCaseReview.objects.update_or_create(
        session_id=session_id,
        defaults={
            "state": state,
            "note": note,
            "reviewed_by": reviewer,
            "reviewed_at": timezone.now(),
        },
    )
    return review


def bad_cases_mark(*, session_ids: Collection[str], state: str, reviewer: str) -> int:
    """Move many bad cases to `state`; returns how many changed state.

    Bad cases already in that state keep the reviewer and time of the first mark, and
    notes are left as they are. Ids that are not bad cases are ignored.
    """
    _check_review_state(state)
    ids = list(dict.fromkeys(session_ids))
    changed = 0
    now = timezone.now()
    for start in range(0, len(ids), MARK_BATCH):
        batch = ids[start : start + MARK_BATCH]
        with transaction.atomic():
            bad = list(
                BadCase.objects.filter(session_id__in=batch).values_list("session_id", flat=True)
            )
            reviewed = set(
                BadCaseReview.objects.filter(session_id__in=bad).values_list(
                    "session_id", flat=True
                )
            )
            changed += (
                BadCaseReview.objects.filter(session_id__in=reviewed)
                .exclude(state=state)
                .update(state=state, reviewed_by=reviewer, reviewed_at=now)
            )
            # A bad case without a review row is NEW already.
            unreviewed = [sid for sid in bad if sid not in reviewed]
            if unreviewed and state != ReviewState.NEW:
                BadCaseReview.objects.bulk_create(
                    [
                        BadCaseReview(
                            session_id=sid, state=state, reviewed_by=reviewer, reviewed_at=now
                        )
                        for sid in unreviewed
                    ],
                    # Another operator's mark of the same case won the race: theirs stands.
                    ignore_conflicts=True,
                )
                changed += len(unreviewed)
    return changed


def _check_review_state(state: str) -> None:
    if state not in ReviewState.values:
        raise ValidationError(
            {"state": f'Unknown review state "{state}": one of {", ".join(ReviewState.values)}.'}
        )
