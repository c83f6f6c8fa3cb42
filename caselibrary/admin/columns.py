"""The case list's columns, also read-only fields of the case page: where a case came
from and whether it was merged into another, and how it fares once found."""

from typing import Any

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from caselibrary.models import CaseLibrary, CaseReuse, SourceType
from config.admin_site import model_pages_of
from diagnosis.admin import session_change_url
from diagnosis.admin_times import long_time
from diagnosis.models import DiagnosisSession, Feedback

# The source in a word, for the narrow list column (the filter has the long labels).
SOURCE_SHORT = {SourceType.AUTO: _("auto"), SourceType.MANUAL: _("manual")}


class CaseColumnsMixin:
    """For CaseLibraryAdmin: columns read from the list's annotations (its queryset), or
    from the case's rows on the case page."""

    @admin.display(description=_("source session"), ordering="diagnosis_id")
    def session_column(self, obj: CaseLibrary) -> SafeString | str:
        if not obj.diagnosis_id:
            return "-"
        if getattr(obj, "session_pk", None) is None:
            return obj.diagnosis_id  # the session is gone; the case outlives it
        # The session's page asks for the sessions' permission, not the cases'.
        link = model_pages_of(obj).link(
            DiagnosisSession, session_change_url(obj.session_pk), obj.diagnosis_id
        )
        if obj.session_feedback == Feedback.NOT_USEFUL:
            return format_html(
                '{} <span class="feedback-not_useful">{}</span>', link, _("now not useful")
            )
        return link

    @admin.display(description=_("source and last change"), ordering="-updated_at")
    def source_column(self, obj: CaseLibrary) -> SafeString:
        # Short lines in one narrow column: the case it was merged into, if it was (found
        # through that one now), where it came from (its session, cut to the column with
        # the whole id in its title), and who changed it last.
        return format_html(
            '{}{} <span class="case-session" title="{}">{}</span><br>'
            '<span class="quiet"><span class="case-who" title="{}">{}</span>, '
            '<time datetime="{}" title="{}">{}</time></span>',
            self.merged_into_marker(obj),
            SOURCE_SHORT.get(obj.source_type, obj.source_type),
            obj.diagnosis_id or "",
            self.session_column(obj),
            obj.updated_by,
            obj.updated_by,
            # The day as every list writes it (diagnosis/admin_times.py), the same in both
            # languages: "12/07/2026" in English read as July, month first.
            localtime(obj.updated_at).isoformat(),
            long_time(obj.updated_at),
            f"{localtime(obj.updated_at):%Y-%m-%d}",
        )

    @staticmethod
    def merged_into_marker(obj: CaseLibrary) -> SafeString | str:
        """A line of its own, "merged into #1a2b3c4d", linking to the kept case (the start
        of its id, the whole id in the link's title); nothing for a case not merged."""
        kept = getattr(obj, "merged_into", None)
        if not kept:
            return ""
        return format_html(
            '<span class="case-merged">{} <a href="{}" title="{}">#{}</a></span><br>',
            _("merged into"),
            reverse("admin:caselibrary_caselibrary_change", args=[kept]),
            kept,
            kept[:8],
        )

    @admin.display(description=_("reuse"), ordering="reuse__l0_hits")
    def reuse_column(self, obj: CaseLibrary) -> SafeString:
        hits = (_reuse(obj, "l0_hits") or 0) + (_reuse(obj, "l1_hits") or 0)
        lines = [
            format_html(ngettext("{} hit", "{} hits", hits), self.hits_column(obj)),
            self.useful_rate_column(obj),
        ]
        last = _reuse(obj, "last_hit_at")
        if last:
            lines.append(
                format_html(
                    '<span class="quiet" title="{}: {}">{}</span>',
                    _("last hit"),
                    long_time(last),
                    f"{localtime(last):%Y-%m-%d}",
                )
            )
        return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines))

    @admin.display(description=_("hits"), ordering="reuse__l0_hits")
    def hits_column(self, obj: CaseLibrary) -> SafeString | str:
        l0, l1 = _reuse(obj, "l0_hits") or 0, _reuse(obj, "l1_hits") or 0
        if not l0 + l1:
            return "0"
        if not model_pages_of(obj).open(DiagnosisSession):
            return format_html('<span title="L0 {} · L1 {}">{}</span>', l0, l1, l0 + l1)
        sessions = reverse("admin:diagnosis_diagnosissession_changelist")  # that found it
        link = f"{sessions}?{urlencode({'found_case': obj.pk})}"
        return format_html('<a href="{}" title="L0 {} · L1 {}">{}</a>', link, l0, l1, l0 + l1)

    @admin.display(description=_("useful rate of the sessions that found it"))
    def useful_rate_column(self, obj: CaseLibrary) -> SafeString | str:
        useful = _reuse(obj, "sessions_useful") or 0
        rated = useful + (_reuse(obj, "sessions_not_useful") or 0)
        if not rated:
            return "–"
        text = f"{useful / rated:.0%} ({useful}/{rated})"
        if _reuse(obj, "stale"):
            return format_html('{} <span class="feedback-not_useful">{}</span>', text, _("stale"))
        return text

    # On the case's page, where every other time is in Django's long form.
    @admin.display(description=_("last hit"), ordering="reuse__last_hit_at")
    def last_hit_column(self, obj: CaseLibrary) -> str:
        last = _reuse(obj, "last_hit_at")
        return long_time(last) if last else "–"


def _reuse(obj: CaseLibrary, name: str) -> Any:
    """A reuse figure: annotated on the list, read from the reuse row on the detail page."""
    if hasattr(obj, name):
        return getattr(obj, name)
    try:
        return getattr(obj.reuse, name)
    except CaseReuse.DoesNotExist:
        return None
