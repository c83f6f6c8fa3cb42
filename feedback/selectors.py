"""Reads for operators: bad cases with their review state, and the overview numbers."""

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import pairwise

from django.core.cache import cache
from django.db.models import Case, Count, F, Q, QuerySet, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from caselibrary.models import GENERAL_CATEGORY, CaseLibrary
from diagnosis.models import DiagnosisSession, Feedback, SessionStatus
from diagnosis.selectors import EVIDENCE_SCORE, ScoreBand, score_band_q
from feedback.models import BadCase, ReviewState

# A bad case without a review row is NEW.
REVIEW_STATE = Coalesce(F("review__state"), Value(ReviewState.NEW))
OPEN_REVIEW_STATES = (ReviewState.NEW, ReviewState.TRIAGED)

OVERVIEW_WINDOWS = (7, 30, 90)
DEFAULT_OVERVIEW_WINDOW = 30
OVERVIEW_CACHE_SECONDS = 60


def bad_cases_open() -> QuerySet[BadCase]:
    return BadCase.objects.alias(review_state=REVIEW_STATE).filter(
        review_state__in=OPEN_REVIEW_STATES
    )


# --- Overview -------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedbackSplit:
    useful: int = 0
    not_useful: int = 0
    no_feedback: int = 0

    @property
    def total(self) -> int:
        return self.useful + self.not_useful + self.no_feedback


@dataclass(frozen=True)
class BandSplit(FeedbackSplit):
    band: str = ""


@dataclass(frozen=True)
class DaySplit(FeedbackSplit):
    day: date | None = None


@dataclass(frozen=True)
class FeedbackOverview:
    days: int
    since: datetime
    sessions: int
    finished: int
    useful: int
    not_useful: int
    bands: tuple[BandSplit, ...]
    per_day: tuple[DaySplit, ...]
    cases_awaiting_curation: int
    cases_whose_session_is_not_useful: int
    open_bad_cases: int

    @property
    def with_feedback(self) -> int:
        return self.useful + self.not_useful

    @property
    def feedback_rate(self) -> float | None:
        """Share of finished sessions whose user said useful or not."""
        return self.with_feedback / self.finished if self.finished else None

    @property
    def bad_case_rate(self) -> float | None:
        """Share of the feedback that was not_useful."""
        return self.not_useful / self.with_feedback if self.with_feedback else None


def feedback_overview(*, days: int = DEFAULT_OVERVIEW_WINDOW) -> FeedbackOverview:
    """The overview over sessions created in the last `days` days (local calendar days),
    cached briefly: the page is opened often and the numbers move slowly.

    Work queues (cases awaiting curation, open bad cases) are not limited to the window:
    they are what is left to do. They are counted on indexed columns.
    """
    if days not in OVERVIEW_WINDOWS:
        raise ValueError(f"days must be one of {OVERVIEW_WINDOWS}")
    key = f"feedback-overview:{days}:{timezone.get_current_timezone_name()}"
    return cache.get_or_set(key, lambda: _compute_overview(days), OVERVIEW_CACHE_SECONDS)


def _compute_overview(days: int) -> FeedbackOverview:
    today = timezone.localdate()
    day_starts = [_local_midnight(today - timedelta(days=n)) for n in range(days - 1, -2, -1)]
    since = day_starts[0]
    window = DiagnosisSession.objects.filter(created_at__gte=since)

    bands: dict[str, dict[str, int]] = {band: {} for band in ScoreBand.values}
    sessions = finished = 0
    for row in _band_feedback_status_counts(window):
        sessions += row["n"]
        if row["status"] != SessionStatus.RUNNING:
            finished += row["n"]
        if row["band"] is not None:
            split = bands[row["band"]]
            kind = row["feedback"] or "none"
            split[kind] = split.get(kind, 0) + row["n"]
    band_splits = tuple(
        BandSplit(
            band=band,
            useful=counts.get(Feedback.USEFUL, 0),
            not_useful=counts.get(Feedback.NOT_USEFUL, 0),
            no_feedback=counts.get("none", 0),
        )
        for band, counts in bands.items()
    )
    return FeedbackOverview(
        days=days,
        since=since,
        sessions=sessions,
        finished=finished,
        useful=sum(b.useful for b in band_splits),
        not_useful=sum(b.not_useful for b in band_splits),
        bands=band_splits,
        per_day=_per_day(window, day_starts),
        cases_awaiting_curation=CaseLibrary.objects.filter(fault_category=GENERAL_CATEGORY).count(),
        cases_whose_session_is_not_useful=CaseLibrary.objects.filter(
            diagnosis__feedback=Feedback.NOT_USEFUL
        ).count(),
        open_bad_cases=bad_cases_open().count(),
    )


def _band_feedback_status_counts(window: QuerySet[DiagnosisSession]) -> QuerySet:
    band = Case(
        *(When(score_band_q(b), then=Value(b)) for b in ScoreBand.values),
        default=Value(None),
    )
    return (
        window.alias(score=EVIDENCE_SCORE)
        .annotate(band=band)
        .values("band", "feedback", "status")
        .annotate(n=Count("id"))
        .order_by()
    )


def _per_day(window: QuerySet[DiagnosisSession], day_starts: list[datetime]) -> tuple:
    # Local calendar days, bounded in Python: grouping by a date function would need the
    # server's time-zone tables on MySQL (CONVERT_TZ) and would not use the index anyway.
    # One pass over the window, three conditional counts per day.
    counts = {}
    for n, (start, end) in enumerate(pairwise(day_starts)):
        in_day = Q(created_at__gte=start, created_at__lt=end)
        counts[f"u{n}"] = Count("id", filter=in_day & Q(feedback=Feedback.USEFUL))
        counts[f"b{n}"] = Count("id", filter=in_day & Q(feedback=Feedback.NOT_USEFUL))
        counts[f"t{n}"] = Count("id", filter=in_day)
    totals = window.aggregate(**counts)
    return tuple(
        DaySplit(
            day=timezone.localdate(start),
            useful=totals[f"u{n}"],
            not_useful=totals[f"b{n}"],
            no_feedback=totals[f"t{n}"] - totals[f"u{n}"] - totals[f"b{n}"],
        )
        for n, start in enumerate(day_starts[:-1])
    )


def _local_midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, datetime.min.time()))
