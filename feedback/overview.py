"""The admin's overview page: how the agent fares with its users, at a glance.

Charts are inline SVG laid out here and drawn by the template: no script, no CDN.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from caselibrary.models import CaseLibrary
from caselibrary.selectors import case_index_status, case_structuring_accuracy
from diagnosis.models import DiagnosisSession
from diagnosis.selectors import ScoreBand
from feedback.models import BadCase
from feedback.selectors import (
    DEFAULT_OVERVIEW_WINDOW,
    OVERVIEW_WINDOWS,
    FeedbackOverview,
    FeedbackSplit,
    feedback_overview,
    overview_window,
)

# Feedback kinds in the order they are stacked and drawn, with their CSS classes.
INDEX_LATE = timedelta(minutes=1)
SERIES = (
    ("useful", "useful"),
    ("not_useful", "not-useful"),
    ("no_feedback", "no-feedback"),
)


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    css: str
    title: str


@dataclass(frozen=True)
class Tick:
    x: float
    y: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    plot_left: int
    plot_bottom: int
    plot_right: int
    bars: tuple[Bar, ...]
    x_labels: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]


WIDTH, HEIGHT = 720, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 16, 36


def _series_labels() -> dict[str, str]:
    return {
        "useful": _("useful"),
        "not_useful": _("not useful"),
        "no_feedback": _("no feedback"),
    }


def score_chart(overview: FeedbackOverview) -> Chart:
    """Per score band, the share of each feedback kind's sessions that fall in it.

    Each kind sums to 100 % over the bands, so the bars compare distributions: if the
    score separates useful from not useful answers, the two colors pull apart.
    """
    totals = {kind: sum(getattr(b, kind) for b in overview.bands) for kind, _css in SERIES}
    labels = _series_labels()
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    group_w = plot_w / len(overview.bands)
    bar_w = group_w * 0.24
    bars, x_labels = [], []
    for g, split in enumerate(overview.bands):
        group_x = LEFT + g * group_w
        for s, (kind, css) in enumerate(SERIES):
            count = getattr(split, kind)
            share = count / totals[kind] if totals[kind] else 0.0
            height = plot_h * share
            bars.append(
                Bar(
                    x=round(group_x + group_w * 0.14 + s * bar_w, 1),
                    y=round(TOP + plot_h - height, 1),
                    width=round(bar_w * 0.92, 1),
                    height=round(height, 1),
                    css=css,
                    title=f"{ScoreBand(split.band).label} · {labels[kind]}: {share:.0%} ({count})",
                )
            )
        x_labels.append(
            Tick(
                x=round(group_x + group_w / 2, 1), y=HEIGHT - 14, label=ScoreBand(split.band).label
            )
        )
    y_ticks = tuple(
        Tick(x=LEFT - 6, y=round(TOP + plot_h * (1 - p), 1), label=f"{p:.0%}")
        for p in (0, 0.25, 0.5, 0.75, 1)
    )
    return Chart(
        WIDTH, HEIGHT, LEFT, TOP + plot_h, WIDTH - RIGHT, tuple(bars), tuple(x_labels), y_ticks
    )


def day_chart(overview: FeedbackOverview) -> Chart:
    """Sessions per day, stacked by feedback."""
    days = overview.per_day
    labels = _series_labels()
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top = _nice_ceiling(max((d.total for d in days), default=0))
    slot = plot_w / max(len(days), 1)
    every = max(1, round(len(days) / 8))
    bars, x_labels = [], []
    for n, day in enumerate(days):
        x = LEFT + n * slot
        y = TOP + plot_h
        for kind, css in SERIES:
            count = getattr(day, kind)
            if not count:
                continue
            height = plot_h * count / top
            y -= height
            bars.append(
                Bar(
                    x=round(x + slot * 0.1, 1),
                    y=round(y, 1),
                    width=round(slot * 0.8, 1),
                    height=round(height, 1),
                    css=css,
                    title=f"{day.day:%Y-%m-%d} · {labels[kind]}: {count}",
                )
            )
        # Every `every` days counted back from today, so that today is labelled and no
        # label sits on top of its neighbour.
        if (len(days) - 1 - n) % every == 0:
            x_labels.append(
                Tick(x=round(x + slot / 2, 1), y=HEIGHT - 14, label=day.day.strftime("%m-%d"))
            )
    y_ticks = tuple(
        Tick(x=LEFT - 6, y=round(TOP + plot_h * (1 - p), 1), label=str(round(top * p)))
        for p in (0, 0.25, 0.5, 0.75, 1)
    )
    return Chart(
        WIDTH, HEIGHT, LEFT, TOP + plot_h, WIDTH - RIGHT, tuple(bars), tuple(x_labels), y_ticks
    )


def _nice_ceiling(value: int) -> int:
    """The smallest of 4, 8, 20, 40, 80, 200, ... at or above `value`: whole quarters."""
    magnitude = 1
    while True:
        for step in (4, 8, 20):
            if step * magnitude >= value:
                return step * magnitude
        magnitude *= 10


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _findability(found: dict | None) -> dict | None:
    """The last check_findability figures as the command prints them (percentages), and
    when it ran as a time the page shows in the console's time zone."""
    if not found:
        return None
    shares = ("title_l0", "title_top3", "code_l0", "code_top3")
    checked = datetime.fromisoformat(found["checked_at"])
    return {"cases": found["cases"], "checked": checked} | {s: _percent(found[s]) for s in shares}


def _changelist(name: str, **params: str) -> str:
    url = reverse(f"admin:{name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


def require_view_permission(request: HttpRequest, *models: type[Model]) -> None:
    """403 unless the user may read (view or change) the admin list of every one of
    `models`: a dashboard shows no figure about a list its reader may not open, as the
    lists and their exports answer 403 themselves."""
    for model in models:
        if not admin.site.get_model_admin(model).has_view_or_change_permission(request):
            raise PermissionDenied


# The lists the overview counts and links to.
OVERVIEW_LISTS: tuple[type[Model], ...] = (DiagnosisSession, BadCase, CaseLibrary)


def may_open_overview(request: HttpRequest) -> bool:
    """Whether overview_view opens to this staff user, by the view's own check (the
    admin index links to the overview only then)."""
    try:
        require_view_permission(request, *OVERVIEW_LISTS)
    except PermissionDenied:
        return False
    return True


def overview_view(request: HttpRequest) -> TemplateResponse:
    """Staff only: mounted behind admin.site.admin_view in config/urls.py. Its figures
    count sessions, bad cases and cases, and link to the three lists."""
    require_view_permission(request, *OVERVIEW_LISTS)
    days = overview_window(request.GET.get("days"), default=DEFAULT_OVERVIEW_WINDOW)
    overview = feedback_overview(days=days)
    structuring = case_structuring_accuracy()
    labels = _series_labels()
    case_search = case_index_status(waiting=True)
    context = {
        **admin.site.each_context(request),
        "title": _("Overview"),
        "overview": overview,
        "windows": OVERVIEW_WINDOWS,
        "feedback_rate": _percent(overview.feedback_rate),
        "bad_case_rate": _percent(overview.bad_case_rate),
        "score_chart": score_chart(overview),
        "day_chart": day_chart(overview),
        "legend": [(css, labels[kind]) for kind, css in SERIES],
        "band_rows": [
            (
                ScoreBand(b.band).label,
                b,
                # The window's sessions only, as the row counts them (the list's own
                # "past 7 days" reaches a day further back).
                _changelist(
                    "diagnosis_diagnosissession",
                    score_band=b.band,
                    created_at__gte=str(overview.since),
                ),
            )
            for b in overview.bands
        ],
        "band_totals": FeedbackSplit(
            **{kind: sum(getattr(b, kind) for b in overview.bands) for kind, _css in SERIES}
        ),
        "open_bad_cases_url": _changelist("feedback_badcase", review_state="open"),
        # The case list's "awaiting curation" filter, under the parameter name it had
        # when it meant GENERAL only (caselibrary/admin/filters.py StillGeneralFilter).
        "awaiting_curation_url": _changelist("caselibrary_caselibrary", still_general="yes"),
        "case_search": case_search,
        "findability": _findability(case_search.findability),
        # A change waits a few seconds for a running worker's indexer: one waiting a
        # minute says no worker indexes (or a rebuild is queued behind a long one).
        "index_waiting": case_search.requested_at is not None
        and case_search.requested_at < timezone.now() - INDEX_LATE,
        "stale_cases_url": _changelist("caselibrary_caselibrary", reuse="stale"),
        "structuring": structuring,
        "structuring_category_rate": _percent(structuring.category_rate),
        "structuring_code_rate": _percent(structuring.code_rate),
        "high_score_bad_cases_url": _changelist(
            "feedback_badcase", review_state="open", score_band=ScoreBand.HIGH
        ),
    }
    return TemplateResponse(request, "admin/overview.html", context)
