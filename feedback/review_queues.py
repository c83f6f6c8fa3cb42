"""Services of the bad-case review queues: who works on which bad case, and its tags.

A bad case has no review row until someone touches it; assigning or tagging one makes
its row (state NEW), so "unassigned" is "no row, or a row without an assignee".
"""

from collections.abc import Collection, Iterable
from typing import Any

from django.contrib.auth import get_permission_codename, get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q, QuerySet

from feedback.models import BadCase, BadCaseReview, ReviewState, ReviewTag
from feedback.selectors import OPEN_REVIEW_STATES

BATCH = 1000


def bad_case_assignees(*, keep: Collection[Any] = ()) -> QuerySet:
    """Whom a bad case may be given to, by name: active staff who may work the queue,
    that is change bad cases, as the admin asks of its reviewers (superusers, and the
    permission given through a group, count). `keep`: the keys of users kept on offer
    whatever they may do now, such as a bad case's current assignee, so that their
    bad cases still save."""
    opts = BadCase._meta
    may_work = get_user_model().objects.with_perm(
        f"{opts.app_label}.{get_permission_codename('change', opts)}"
    )
    wanted = Q(pk__in=may_work.filter(is_staff=True).values("pk"))
    if keep:
        wanted |= Q(pk__in=keep)
    return get_user_model().objects.filter(wanted).order_by("username")


def _reviews_for(session_ids: Iterable[str]) -> list[str]:
    """The ids among `session_ids` that are bad cases, each with a review row.

    Call it before the transaction that changes those rows, so that its insert commits on
    its own: an INSERT IGNORE takes a shared lock on each row already there, and two
    reviewers' changes of the same rows in the same transaction then each waited for the
    other's shared lock to become exclusive (a deadlock on MariaDB; one of them failed)."""
    bad = list(
        BadCase.objects.filter(session_id__in=session_ids).values_list("session_id", flat=True)
    )
    # Another operator making the same row at the same moment is fine: theirs stands.
    BadCaseReview.objects.bulk_create(
        [BadCaseReview(session_id=sid) for sid in bad], ignore_conflicts=True
    )
    return bad


def _batches(session_ids: Collection[str]) -> Iterable[list[str]]:
    ids = list(dict.fromkeys(session_ids))
    for start in range(0, len(ids), BATCH):
        yield ids[start : start + BATCH]


def bad_cases_assign(
    *, session_ids: Collection[str], assignee: AbstractBaseUser | None
) -> list[str]:
    """Give the bad cases to `assignee` (None: back to the unassigned queue); returns the
    ids of those that changed hands (for their history). Ids that are not bad cases are
    ignored."""
    changed: list[str] = []
    for batch in _batches(session_ids):
        bad = _reviews_for(batch)
        rows = BadCaseReview.objects.filter(session_id__in=bad)
        # exclude() on a nullable key keeps the NULL rows: unassigned ones change too.
        rows = rows.exclude(assignee=None) if assignee is None else rows.exclude(assignee=assignee)
        ids = list(rows.values_list("session_id", flat=True))
        rows.filter(session_id__in=ids).update(assignee=assignee)
        changed += ids
    return changed


def bad_cases_tag(*, session_ids: Collection[str], tag: str) -> list[str]:
    """Put `tag` on the bad cases (made when new); returns the ids of those that gained it
    (for their history)."""
    label, _ = ReviewTag.objects.get_or_create(name=tag)
    through = BadCaseReview.tags.through
    added: list[str] = []
    for batch in _batches(session_ids):
        bad = _reviews_for(batch)
        with transaction.atomic():
            already = set(
                through.objects.filter(badcasereview_id__in=bad, reviewtag=label).values_list(
                    "badcasereview_id", flat=True
                )
            )
            new = [sid for sid in bad if sid not in already]
            through.objects.bulk_create(
                [through(badcasereview_id=sid, reviewtag=label) for sid in new],
                ignore_conflicts=True,
            )
            added += new
    return added


def bad_case_queue_save(
    *, session_id: str, assignee: AbstractBaseUser | None, tags: Collection[ReviewTag]
) -> None:
    """The assignee and tags of one bad case, as the review form sets them."""
    if not _reviews_for([session_id]):
        return
    with transaction.atomic():
        review = BadCaseReview.objects.get(session_id=session_id)
        if review.assignee_id != (assignee.pk if assignee else None):
            review.assignee = assignee
            review.save(update_fields=["assignee"])
        review.tags.set(tags)


# Review states a bad case has left the queue in; new reader feedback brings it back.
CLOSED_REVIEW_STATES = tuple(state for state in ReviewState if state not in OPEN_REVIEW_STATES)


def bad_case_reopen(*, session_id: str) -> bool:
    """Put the bad case's review back in the queue (NEW) when it was closed (resolved),
    for new reader feedback saying the answer is wrong; True when it reopened. The note,
    assignee, tags and last review (who, when) stay: the reason to look again is the
    feedback that reopened it, in the bad case's reader history. Run it in the
    transaction that writes that feedback."""
    return bool(
        BadCaseReview.objects.filter(session_id=session_id, state__in=CLOSED_REVIEW_STATES).update(
            state=ReviewState.NEW
        )
    )
