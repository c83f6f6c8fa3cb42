"""The admin's attribution page: which factors go with useful answers, and whether the
evidence score is calibrated (useful share per score band). Inline SVG, no script."""

from dataclasses import dataclass

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _

from diagnosis.models import DiagnosisSession
from diagnosis.selectors import ScoreBand
from evaluation.factor_labels import factor_label
from feedback.overview import require_view_permission
from feedback.selectors import (
    DEFAULT_OVERVIEW_WINDOW,
    OVERVIEW_WINDOWS,
    Rate,
    feedback_attribution,
    overview_window,
)

WIDTH, HEIGHT = 720, 240


def _kind_labels() -> dict[str, str]:
    return {"rule": _("rule"), "opinion": _("opinion")}


LEFT, RIGHT, TOP, BOTTOM = 48, 12, 16, 36


@dataclass(frozen=True)
class CalibrationBar:
    x: float
    y: float
    width: float
    height: float
    cx: float
    low_y: float | None
    high_y: float | None
    label: str
    title: str


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _interval(rate: Rate) -> str:
    interval = rate.interval
    return "–" if interval is None else f"{interval[0]:.0%}–{interval[1]:.0%}"


def calibration_bars(bands: tuple[tuple[str, Rate], ...]) -> list[CalibrationBar]:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(bands), 1)
    bars = []
    for n, (band, rate) in enumerate(bands):
        share = rate.share or 0.0
        interval = rate.interval
        bars.append(
            CalibrationBar(
                x=round(LEFT + n * slot + slot * 0.25, 1),
                y=round(TOP + plot_h * (1 - share), 1),
                width=round(slot * 0.5, 1),
                height=round(plot_h * share, 1),
                cx=round(LEFT + n * slot + slot * 0.5, 1),
                low_y=round(TOP + plot_h * (1 - interval[0]), 1) if interval else None,
                high_y=round(TOP + plot_h * (1 - interval[1]), 1) if interval else None,
                label=str(ScoreBand(band).label),
                title=_("%(band)s: %(share)s useful (%(useful)s/%(rated)s, 95%% %(interval)s)")
                % {
                    "band": ScoreBand(band).label,
                    "share": _percent(rate.share),
                    "useful": rate.useful,
                    "rated": rate.rated,
                    "interval": _interval(rate),
                },
            )
        )
    return bars


def attribution_view(request: HttpRequest) -> TemplateResponse:
    """Staff only: mounted behind admin.site.admin_view in config/urls.py. It reads
    sessions and their feedback alone."""
    require_view_permission(request, DiagnosisSession)
    days = overview_window(request.GET.get("days"), default=DEFAULT_OVERVIEW_WINDOW)
    attribution = feedback_attribution(days=days)
    kinds = _kind_labels()
    rows = [
        {
            "factor": f,
            "label": factor_label(f.name),
            "kind": kinds.get(f.kind, f.kind),
            "with_share": _percent(f.with_it.share),
            "with_interval": _interval(f.with_it),
            "without_share": _percent(f.without_it.share),
            "without_interval": _interval(f.without_it),
            "lift": "–" if f.lift is None else f"{f.lift:+.0%}",
        }
        for f in attribution.factors
    ]
    plot_h = HEIGHT - TOP - BOTTOM
    context = {
        **admin.site.each_context(request),
        "title": _("Which factors go with useful answers"),
        "attribution": attribution,
        "windows": OVERVIEW_WINDOWS,
        "rows": rows,
        "bars": calibration_bars(attribution.bands),
        "chart": {
            "width": WIDTH,
            "height": HEIGHT,
            "left": LEFT,
            "right": WIDTH - RIGHT,
            "bottom": TOP + plot_h,
            "ticks": [(round(TOP + plot_h * (1 - p), 1), f"{p:.0%}") for p in (0, 0.5, 1)],
        },
        "band_rows": [
            (ScoreBand(band).label, rate, _percent(rate.share), _interval(rate))
            for band, rate in attribution.bands
        ],
    }
    return TemplateResponse(request, "admin/attribution.html", context)
