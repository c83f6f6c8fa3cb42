"""Reads for operators: bad cases with their review state."""

from django.db.models import F, QuerySet, Value
from django.db.models.functions import Coalesce

from feedback.models import BadCase, ReviewState

# A bad case without a review row is NEW.
REVIEW_STATE = Coalesce(F("review__state"), Value(ReviewState.NEW))
OPEN_REVIEW_STATES = (ReviewState.NEW, ReviewState.TRIAGED)


def bad_cases_open() -> QuerySet[BadCase]:
    return BadCase.objects.alias(review_state=REVIEW_STATE).filter(
        review_state__in=OPEN_REVIEW_STATES
    )
