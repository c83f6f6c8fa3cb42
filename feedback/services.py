"""Users' feedback on an answer (`useful` makes a case, `not_useful` marks a bad case),
and operators' review of the bad cases."""

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from caselibrary.models import CaseLibrary, title_from_query
from caselibrary.services.cases import (
    SessionAlreadyHasCase,
    case_create_from_session,
    case_create_manual,
)
from config import metrics
from config.api import Conflict, NotFound, shows_words
from diagnosis.models import DiagnosisSession, Feedback, SessionStatus
from feedback.body import FeedbackBody, InvalidFeedbackBody, feedback_body_from
from feedback.models import BadCase, BadCaseReview, FeedbackChannel, FeedbackEntry, ReviewState
from feedback.review_queues import bad_case_queue_save, bad_case_reopen

logger = logging.getLogger(__name__)

SESSION_NOT_FOUND = "会话不存在"
SESSION_STILL_RUNNING = "会话仍在执行中，执行结束后才能反馈。"
SESSION_HAS_NO_ANSWER = "这个会话没有答案，不能标记为有用。"


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


def feedback_submit(
    *,
    session_id: str,
    feedback: str,
    reason: str = "",
    comment: str = "",
    correction: str = "",
    with_token: bool = False,
) -> FeedbackResult:
    """Record `useful` / `not_useful` for a finished session; the last write wins.

    `status` is never touched. Repeating the value a session already has changes
    nothing, not even `feedback_at`. A reason, comment or correction is kept as a
    history row beside it (the verdict and its words commit together, or neither),
    unless it repeats the session's latest row word for word: a client's retry adds
    nothing to the history either.
    """
    checked = _checked(
        session_id=session_id,
        feedback=feedback,
        reason=reason,
        comment=comment,
        correction=correction,
    )
    channel = FeedbackChannel.TOKEN if with_token else FeedbackChannel.API_KEY
    if checked.reason or checked.comment or checked.correction:
        with transaction.atomic():
            # The session's row lock first: two copies of one body arriving together
            # then read the history one after the other, and the second finds the first.
            _lock_session_row(session_id)
            result = _submit(session_id, feedback)
            statement = {"feedback": feedback, **checked.details(), "channel": channel}
            if _latest_statement(session_id) != statement:
                FeedbackEntry.objects.create(session_id=session_id, **statement)
                # New words saying the answer is wrong reopen its bad case.
                if feedback == Feedback.NOT_USEFUL:
                    bad_case_reopen(session_id=session_id)
    else:
        result = _submit(session_id, feedback)
    logger.info(
        "feedback recorded",
        extra={
            "session_id": session_id,
            "feedback": feedback,
            "channel": channel.value,
            "changed": result.changed,
            "case_id": result.case_id,
        },
    )
    return result


def _checked(**given: str) -> FeedbackBody:
    """What /api/feedback takes of these values, as its body's rules take them (a NUL
    character refused); a value it refuses is a ValidationError in its words, keyed by
    the argument, before anything is read."""
    # An empty reason, comment or correction is none, as null is in a body.
    body = {
        key: None if key not in ("sessionId", "feedback") and given[name] == "" else given[name]
        for name, key in _BODY_KEYS
    }
    try:
        return feedback_body_from(body)
    except InvalidFeedbackBody as whole:
        # The last argument's, unless one before it is refused first (below): with all
        # of those accepted, the whole body's problem is the last one's.
        refused, problem = _BODY_KEYS[-1][0], whole
    # Refused: one argument more at a time, the first one refused names the problem.
    so_far: dict[str, object] = {"sessionId": "s", "feedback": Feedback.USEFUL.value}
    for name, key in _BODY_KEYS[:-1]:
        so_far[key] = body[key]
        try:
            feedback_body_from(so_far)
        except InvalidFeedbackBody as earlier:
            refused, problem = name, earlier
            break
    raise ValidationError({refused: [str(problem)]})


_BODY_KEYS = (
    ("session_id", "sessionId"),
    ("feedback", "feedback"),
    ("reason", "reason"),
    ("comment", "comment"),
    ("correction", "correction"),
)


_STATEMENT_FIELDS = ("feedback", "reason", "comment", "correction", "channel")


def _lock_session_row(session_id: str) -> None:
    """Hold the session's row until the transaction ends (an unknown session locks
    nothing: the verdict's own read answers 404)."""
    list(DiagnosisSession.objects.select_for_update().filter(session_id=session_id).values("pk"))


def _latest_statement(session_id: str) -> dict[str, str] | None:
    """What the session's latest history row said, and with what, or None."""
    return (
        FeedbackEntry.objects.filter(session_id=session_id)
        .order_by("-created_at", "-id")
        .values(*_STATEMENT_FIELDS)
        .first()
    )


def _submit(session_id: str, feedback: str) -> FeedbackResult:
    if feedback == Feedback.USEFUL:
        return feedback_useful(session_id=session_id)
    return feedback_not_useful(session_id=session_id)


def feedback_useful(*, session_id: str) -> FeedbackResult:
    """Rate the session useful and return its case, made on the first `useful`.

    The session's row lock orders concurrent requests: the first makes the case, the
    others find it, so every one of them returns the same caseId. An operator saving a
    case for the same session at that moment does not take the lock: the case's unique
    key refuses one of the two, and a refused `useful` is tried once more, when it finds
    the operator's case.
    """
    try:
        return _useful(session_id)
    except IntegrityError:
        return _useful(session_id)


def _useful(session_id: str) -> FeedbackResult:
    with transaction.atomic():
        session = _locked_session(session_id, fields=("query", "answer", "case__case_id"))
        _check_open_to_feedback(session)
        case = getattr(session, "case", None)
        # Only a useful that makes the case needs the answer: a session that has its
        # case answers with it, and a repeat changes nothing (an adopted database's
        # sessions may have a case, or a useful, and no answer).
        makes_case = case is None and session.feedback != Feedback.USEFUL
        if makes_case and not shows_words(session.answer):
            raise FeedbackConflict(SESSION_HAS_NO_ANSWER)
        changed = _record(session, Feedback.USEFUL)
        if case is None and changed:
            # Also after useful, not_useful, useful again when an operator deleted the case;
            # a repeat of useful changes nothing, and brings back no case an operator deleted.
            case = case_create_from_session(session=session)
    return FeedbackResult(
        session_id=session_id,
        feedback=Feedback.USEFUL,
        case_id=case.case_id if case is not None else None,
        changed=changed,
    )


# Sessions that not_useful would change: finished, and not rated not_useful already. Built
# once, at import: building the two lookups on every request cost 0.15-0.2 ms in process,
# half of what the database takes for the UPDATE itself (0.4 ms, MariaDB).
_MAY_TURN_NOT_USEFUL = DiagnosisSession.objects.exclude(status=SessionStatus.RUNNING).exclude(
    feedback=Feedback.NOT_USEFUL
)


def feedback_not_useful(*, session_id: str) -> FeedbackResult:
    """Mark the session a bad case.

    One conditional UPDATE, the button's whole cost when it changes something: it
    writes no case, so it needs no lock held across statements. Only when it matched
    nothing does a read say why (unknown, still running, or already not_useful).
    """
    now = timezone.now()
    updated = _MAY_TURN_NOT_USEFUL.filter(session_id=session_id).update(
        feedback=Feedback.NOT_USEFUL, feedback_at=now, updated_at=now
    )
    if updated:
        transaction.on_commit(partial(metrics.feedback_recorded, Feedback.NOT_USEFUL), robust=True)
    else:
        session = DiagnosisSession.objects.filter(session_id=session_id).only("status").first()
        if session is None:
            raise FeedbackSessionNotFound()
        _check_open_to_feedback(session)
    return FeedbackResult(
        session_id=session_id, feedback=Feedback.NOT_USEFUL, case_id=None, changed=bool(updated)
    )


def _locked_session(session_id: str, *, fields: tuple[str, ...]) -> DiagnosisSession:
    try:
        return (
            DiagnosisSession.objects.select_for_update()
            .select_related("case")
            .only("id", "session_id", "status", "feedback", *fields)
            .get(session_id=session_id)
        )
    except DiagnosisSession.DoesNotExist:
        raise FeedbackSessionNotFound() from None


def _check_open_to_feedback(session: DiagnosisSession) -> None:
    if session.status == SessionStatus.RUNNING:
        raise FeedbackConflict(SESSION_STILL_RUNNING)


def _record(session: DiagnosisSession, feedback: str) -> bool:
    """Give the locked session `feedback`; False when it had that value already."""
    if session.feedback == feedback:
        return False
    session.feedback = feedback
    session.feedback_at = timezone.now()
    session.save(update_fields=["feedback", "feedback_at", "updated_at"])
    transaction.on_commit(partial(metrics.feedback_recorded, feedback), robust=True)
    return True


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


REVIEW_FIELDS = ("state", "note", "assignee", "tags")


def bad_case_review_update(*, session_id: str, changed: Mapping[str, Any], reviewer: str) -> None:
    """An operator's edit of one bad case's review: only the fields in `changed` (of
    REVIEW_FIELDS) are written. The others keep what the review holds now, read under a
    lock held until the edit commits, so a colleague's save since the page was opened
    survives (the same field: the last save stands). A change of state or note records
    who reviewed and when."""
    if not changed:
        return
    with transaction.atomic():
        review = _review_for_update(session_id)
        held = {
            "state": review.state if review else ReviewState.NEW,
            "note": review.note if review else "",
            "assignee": review.assignee if review else None,
            "tags": list(review.tags.all()) if review else [],
        }
        value = {**held, **changed}
        if {"assignee", "tags"} & changed.keys():
            bad_case_queue_save(
                session_id=session_id, assignee=value["assignee"], tags=value["tags"]
            )
        if {"state", "note"} & changed.keys():
            bad_case_review_save(
                session_id=session_id, state=value["state"], note=value["note"], reviewer=reviewer
            )


def _review_for_update(session_id: str) -> BadCaseReview | None:
    """The bad case's review, made (NEW) when it has none, locked until the transaction
    ends; None when the session is not a bad case.

    Made under its unique key: of two first saves at the same moment, one makes the row
    and the other waits for it, then reads it, so each writes its own fields onto what
    the other saved. Without a row to lock, both would read "no review" and the second
    would write the first's fields back to their defaults."""
    if not BadCase.objects.filter(session_id=session_id).exists():
        return None
    review, _ = BadCaseReview.objects.select_for_update().get_or_create(session_id=session_id)
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
            # Each session read by its unique id, with its review if it has one; the
            # feedback compared here. Asked in SQL for not_useful as well, SQLite read
            # every bad case through the feedback index for each batch: marking 50,000
            # read 2.5 million rows.
            found = DiagnosisSession.objects.filter(session_id__in=batch).values_list(
                "session_id", "feedback", "review__state"
            )
            bad = {
                sid: review for sid, feedback, review in found if feedback == Feedback.NOT_USEFUL
            }
            reviewed = [sid for sid, review in bad.items() if review is not None]
            changed += (
                BadCaseReview.objects.filter(session_id__in=reviewed)
                .exclude(state=state)
                .update(state=state, reviewed_by=reviewer, reviewed_at=now)
            )
            # A bad case without a review row is NEW already.
            unreviewed = [sid for sid, review in bad.items() if review is None]
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
                # Only the rows this call wrote: a conflict ignored above wrote nothing.
                # Read by key and compared here: asked in SQL for this state and time,
                # SQLite went through the (state, reviewed_at) index, which holds every
                # row this call wrote in the batches before.
                written = BadCaseReview.objects.filter(session_id__in=unreviewed).values_list(
                    "state", "reviewed_by", "reviewed_at"
                )
                changed += sum(1 for row in written if row == (state, reviewer, now))
    return changed


def _check_review_state(state: str) -> None:
    if state not in ReviewState.values:
        raise ValidationError(
            {"state": f'Unknown review state "{state}": one of {", ".join(ReviewState.values)}.'}
        )


# --- Corrections ----------------------------------------------------------------------

# Read by operators in the admin, in their language (the refused session's id follows).
NO_CORRECTION = gettext_lazy("No reader sent a correction for this session.")
ALREADY_A_CASE = gettext_lazy("This session already has a case: edit that case instead.")


def bad_case_case_from_correction(*, session_id: str, created_by: str) -> CaseLibrary:
    """A MANUAL case whose root cause is the latest correction readers sent, linked to
    the session (its diagnosis_id). The session may have one case only."""
    entry = (
        FeedbackEntry.objects.filter(session_id=session_id)
        .exclude(correction="")
        .order_by("-created_at", "-id")
        .select_related("session")
        .first()
    )
    if entry is None:
        raise ValidationError(NO_CORRECTION)
    if CaseLibrary.objects.filter(diagnosis_id=session_id).exists():
        raise ValidationError(ALREADY_A_CASE)
    correction = entry.correction.strip()
    try:
        with transaction.atomic():
            return case_create_manual(
                created_by=created_by,
                title=title_from_query(entry.session.query, session_id),
                root_cause=correction,
                solution=correction,
                diagnosis_id=session_id,
                of_a_correction=True,
            )
    except SessionAlreadyHasCase:
        # Someone else's case for this session won the unique key in the meantime.
        raise ValidationError(ALREADY_A_CASE) from None
