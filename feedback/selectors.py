"""Reads for operators: bad cases with their review state, and the overview numbers."""

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db.models import Case, Count, F, IntegerField, Q, QuerySet, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from caselibrary.selectors import cases_awaiting_curation
from config.optional_cache import cached_or_computed
from diagnosis.models import DiagnosisSession, Feedback, SessionStatus
from diagnosis.selectors import EVIDENCE_SCORE, SCORE_BAND_BOUNDS, ScoreBand, score_band
from evaluation.opinion import FACTOR_NAMES
from evaluation.rules import RULES, STOP_RULES
from feedback.models import BadCase, BadCaseReview, FeedbackEntry, ReviewState

# A bad case without a review row is NEW.
REVIEW_STATE = Coalesce(F("review__state"), Value(ReviewState.NEW))
OPEN_REVIEW_STATES = (ReviewState.NEW, ReviewState.TRIAGED)

OVERVIEW_WINDOWS = (7, 30, 90)
DEFAULT_OVERVIEW_WINDOW = 30
OVERVIEW_CACHE_SECONDS = 60
SCORE_SAMPLE = 5_000


def overview_window(days: int | str | None, *, default: int | None = None) -> int:
    """`days` as one of OVERVIEW_WINDOWS, the days back the overview and attribution look.

    A string (a query parameter) is read as a whole number. Anything else, or a window not
    offered, is `default` when one is given (a page shows that), else a ValueError.
    """
    try:
        window = int(days) if isinstance(days, str) else days
    except ValueError:
        window = None
    if window in OVERVIEW_WINDOWS:
        return window
    if default is None:
        raise ValueError(f"days must be one of {OVERVIEW_WINDOWS}")
    return default


def bad_cases_open_count() -> int:
    """Bad cases not resolved yet, of all time.

    Counted as all bad cases minus the resolved ones: the first is an index-only count
    over (feedback, created_at), the second starts from the few resolved reviews. The
    straight LEFT JOIN reads every bad case's row to find its review.
    """
    resolved = BadCaseReview.objects.filter(
        state=ReviewState.RESOLVED, session__feedback=Feedback.NOT_USEFUL
    ).count()
    return BadCase.objects.count() - resolved


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
    running: int
    per_day: tuple[DaySplit, ...]
    bands: tuple[BandSplit, ...]
    # The score distribution looks at the latest `score_sample` sessions of each kind of
    # feedback in the window; `sampled` says whether some kind had more.
    score_sample: int
    sampled: bool
    cases_awaiting_curation: int
    open_bad_cases: int

    @property
    def finished(self) -> int:
        return self.sessions - self.running

    @property
    def useful(self) -> int:
        return sum(d.useful for d in self.per_day)

    @property
    def not_useful(self) -> int:
        return sum(d.not_useful for d in self.per_day)

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
    """The overview over sessions created in the last `days` local calendar days, cached
    briefly: the page is opened often and the numbers move slowly.

    Shaped for a table of millions: the counts per day are read from the (feedback,
    created_at) index alone, the running ones from (status, created_at); only the
    score sample reads rows. The work queues (open bad cases, cases awaiting curation:
    caselibrary/selectors.py AWAITING_CURATION) are not limited to the window: they are
    what is left to do.
    """
    days = overview_window(days)
    key = f"feedback-overview:{days}:{timezone.get_current_timezone_name()}"
    return cached_or_computed(key, lambda: _compute_overview(days), OVERVIEW_CACHE_SECONDS)


def _compute_overview(days: int) -> FeedbackOverview:
    today = timezone.localdate()
    day_starts = [_local_midnight(today - timedelta(days=n)) for n in range(days - 1, -2, -1)]
    window = DiagnosisSession.objects.filter(created_at__gte=day_starts[0])
    per_day = _per_day(window, day_starts)
    bands, sampled = _score_bands(window)
    return FeedbackOverview(
        days=days,
        since=day_starts[0],
        sessions=sum(d.total for d in per_day),
        running=window.filter(status=SessionStatus.RUNNING).count(),
        per_day=per_day,
        bands=bands,
        score_sample=SCORE_SAMPLE,
        sampled=sampled,
        cases_awaiting_curation=cases_awaiting_curation().count(),
        open_bad_cases=bad_cases_open_count(),
    )


def _per_day(
    window: QuerySet[DiagnosisSession], day_starts: list[datetime]
) -> tuple[DaySplit, ...]:
    # Local calendar days bounded in Python (grouping by a date function needs the
    # server's time-zone tables on MySQL), numbered per row by a balanced CASE (a few
    # comparisons, not one per day). The feedback condition is always true; it is there
    # so that the (feedback, created_at) index answers the query without reading a row.
    day = _day_number(day_starts[1:-1], first=0)
    rows = (
        window.filter(Q(feedback__isnull=True) | Q(feedback__in=Feedback.values))
        .annotate(day=day)
        .values("day", "feedback")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts: dict[tuple[int, str | None], int] = {(r["day"], r["feedback"]): r["n"] for r in rows}
    return tuple(
        DaySplit(
            day=timezone.localdate(start),
            useful=counts.get((n, Feedback.USEFUL), 0),
            not_useful=counts.get((n, Feedback.NOT_USEFUL), 0),
            no_feedback=counts.get((n, None), 0),
        )
        for n, start in enumerate(day_starts[:-1])
    )


def _day_number(boundaries: list[datetime], *, first: int) -> Case | Value:
    """The number of the day a row's created_at falls in, days split at `boundaries`."""
    if not boundaries:
        return Value(first)
    middle = len(boundaries) // 2
    return Case(
        When(
            created_at__lt=boundaries[middle],
            then=_day_number(boundaries[:middle], first=first),
        ),
        default=_day_number(boundaries[middle + 1 :], first=first + middle + 1),
        output_field=IntegerField(),
    )


def _score_bands(window: QuerySet[DiagnosisSession]) -> tuple[tuple[BandSplit, ...], bool]:
    # A distribution needs a sample, not a million rows: the newest sessions of each
    # kind, read newest-first along the (feedback, created_at) index.
    per_kind: dict[str, dict[str, int]] = {}
    sampled = False
    for kind, condition in (
        ("useful", Q(feedback=Feedback.USEFUL)),
        ("not_useful", Q(feedback=Feedback.NOT_USEFUL)),
        ("no_feedback", Q(feedback__isnull=True)),
    ):
        # The status comes with the score, in the same query: an unscored session is
        # PENDING or UNSCORED by its status, as the sessions list's band filter has it.
        rows = list(
            window.filter(condition)
            .annotate(score=EVIDENCE_SCORE)
            .order_by("-created_at")
            .values_list("score", "status")[: SCORE_SAMPLE + 1]
        )
        sampled = sampled or len(rows) > SCORE_SAMPLE
        per_kind[kind] = Counter(
            score_band(score, status=status) for score, status in rows[:SCORE_SAMPLE]
        )
    bands = tuple(
        BandSplit(band=band, **{kind: per_kind[kind].get(band, 0) for kind in per_kind})
        for band in ScoreBand.values
    )
    return bands, sampled


def _local_midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, datetime.min.time()))


# --- Disagreement queues --------------------------------------------------------------------

# A high score that users still called not useful: the evidence was there and the answer
# failed anyway. A low score on a useful answer: the knowledge was not in the tools.
CONFIDENT_MIN_SCORE = 65
UNBACKED_MAX_SCORE = 39


def sessions_confident_but_wrong(queryset: QuerySet) -> QuerySet:
    """Of these bad cases, those scored CONFIDENT_MIN_SCORE or more."""
    return queryset.alias(disagreement_score=EVIDENCE_SCORE).filter(
        disagreement_score__gte=CONFIDENT_MIN_SCORE
    )


def sessions_useful_without_evidence(queryset: QuerySet) -> QuerySet:
    """Of these useful sessions, those scored below 40 (pending ones are not judged)."""
    return queryset.alias(disagreement_score=EVIDENCE_SCORE).filter(
        disagreement_score__lte=UNBACKED_MAX_SCORE
    )


# --- Attribution: which factors go with useful answers ----------------------------------------

Z_95 = 1.959964


@dataclass(frozen=True)
class Rate:
    useful: int
    rated: int

    @property
    def share(self) -> float | None:
        return self.useful / self.rated if self.rated else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% Wilson score interval of the useful share."""
        if not self.rated:
            return None
        n, p, z2 = self.rated, self.useful / self.rated, Z_95 * Z_95
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = Z_95 * ((p * (1 - p) / n + z2 / (4 * n * n)) ** 0.5) / (1 + z2 / n)
        return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class FactorAttribution:
    name: str
    kind: str  # "rule" or "opinion"
    with_it: Rate
    without_it: Rate

    @property
    def lift(self) -> float | None:
        a, b = self.with_it.share, self.without_it.share
        return None if a is None or b is None else a - b


@dataclass(frozen=True)
class Attribution:
    days: int
    since: datetime
    sampled: int
    sample_limit: int
    factors: tuple[FactorAttribution, ...]
    bands: tuple[tuple[str, Rate], ...]


def feedback_attribution(*, days: int = DEFAULT_OVERVIEW_WINDOW) -> Attribution:
    """For each rule factor and opinion factor, the useful share of rated sessions with it
    and without it; and the useful share per evidence-score band (calibration).

    Read from a bounded sample, the newest settings.ATTRIBUTION_SAMPLE useful and as many
    not useful sessions of the window (each read newest-first off the (feedback, created_at)
    index), so the page costs the same at a million sessions as at ten thousand; cached
    like the overview. The sample is said on the page.
    """
    days = overview_window(days)
    key = f"feedback-attribution:{days}:{timezone.get_current_timezone_name()}"
    return cached_or_computed(key, lambda: _compute_attribution(days), OVERVIEW_CACHE_SECONDS)


def _compute_attribution(days: int) -> Attribution:
    since = _local_midnight(timezone.localdate() - timedelta(days=days - 1))
    window = DiagnosisSession.objects.filter(created_at__gte=since)
    rated: list[tuple[bool, dict]] = []
    for value in (Feedback.USEFUL, Feedback.NOT_USEFUL):
        evaluations = (
            window.filter(feedback=value, self_evaluation__isnull=False)
            .order_by("-created_at")
            .values_list("self_evaluation", flat=True)[: settings.ATTRIBUTION_SAMPLE]
        )
        rated += [(value == Feedback.USEFUL, e) for e in evaluations if isinstance(e, dict)]
    return Attribution(
        days=days,
        since=since,
        sampled=len(rated),
        sample_limit=settings.ATTRIBUTION_SAMPLE,
        factors=_factor_rates(rated),
        bands=_band_rates(rated),
    )


def _present_factors(evaluation: dict) -> set[tuple[str, str]]:
    present = {
        ("rule", f["name"])
        for f in evaluation.get("factors") or []
        if isinstance(f, dict) and isinstance(f.get("name"), str)
    }
    opinion = evaluation.get("llm_opinion")
    if isinstance(opinion, dict):
        present |= {
            ("opinion", f["name"])
            for f in opinion.get("factors") or []
            if isinstance(f, dict) and f.get("value") is True and isinstance(f.get("name"), str)
        }
    return present


def _factor_rates(rated: list[tuple[bool, dict]]) -> tuple[FactorAttribution, ...]:
    known = [("rule", r.name) for r in (*STOP_RULES, *RULES)]
    known += [("opinion", name) for name in FACTOR_NAMES]
    # Each session's factors read once; then one pass per factor over plain sets.
    rows = [
        (useful, _present_factors(e), isinstance(e.get("llm_opinion"), dict)) for useful, e in rated
    ]
    out = []
    for kind, name in known:
        # An opinion factor is judged among the sessions that have an opinion at all.
        pool = [(u, present) for u, present, opinion in rows if kind == "rule" or opinion]
        has = [u for u, present in pool if (kind, name) in present]
        lacks = [u for u, present in pool if (kind, name) not in present]
        out.append(
            FactorAttribution(
                name=name,
                kind=kind,
                with_it=Rate(useful=sum(has), rated=len(has)),
                without_it=Rate(useful=sum(lacks), rated=len(lacks)),
            )
        )
    return tuple(out)


def _band_rates(rated: list[tuple[bool, dict]]) -> tuple[tuple[str, Rate], ...]:
    counts: dict[str, list[int]] = {band: [0, 0] for band in ScoreBand.values}
    for useful, evaluation in rated:
        score = evaluation.get("evidence_score")
        band = score_band(score if isinstance(score, int) else None)
        counts[band][0] += useful
        counts[band][1] += 1
    # Calibration is about scores: the bands without one are left out.
    return tuple(
        (band, Rate(useful=u, rated=n))
        for band, (u, n) in counts.items()
        if band in SCORE_BAND_BOUNDS
    )


def feedback_entries_of(*, session_id: str) -> list[FeedbackEntry]:
    """What readers said with their feedback on this session, newest first."""
    return list(
        FeedbackEntry.objects.filter(session_id=session_id).order_by("-created_at", "-id")[:200]
    )
