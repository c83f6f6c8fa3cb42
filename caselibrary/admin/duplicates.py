"""The case page's near-duplicates: side by side, with "merge into" (keeps the older)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import HttpRequest, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _

from caselibrary.models import CaseDuplicate, CaseLibrary, CaseMerge
from caselibrary.services.duplicates import case_merge


def near_duplicates(case: CaseLibrary) -> list[tuple[CaseLibrary, float]]:
    """The unmerged cases flagged as saying the same as `case`, either way round."""
    flags = CaseDuplicate.objects.filter(Q(case_id=case.pk) | Q(similar_id=case.pk))
    similarity = {
        (f.similar_id if f.case_id == case.pk else f.case_id): f.similarity for f in flags
    }
    others = CaseLibrary.objects.filter(pk__in=list(similarity)).exclude(
        pk__in=CaseMerge.objects.values("case_id")
    )
    return [(other, similarity[other.pk]) for other in others.order_by("created_at")]


class NearDuplicatesMixin:
    """For CaseLibraryAdmin: the read-only `near_duplicates_column` and the merge view."""

    def get_urls(self) -> list:  # type: ignore[override]
        info = self.model._meta.app_label, self.model._meta.model_name  # type: ignore[attr-defined]
        extra = [
            path(
                "<path:object_id>/merge/<str:other_id>/",
                self.admin_site.admin_view(self.merge_view),  # type: ignore[attr-defined]
                name="{}_{}_merge".format(*info),
            )
        ]
        return extra + super().get_urls()  # type: ignore[misc]

    def merge_view(self, request: HttpRequest, object_id: str, other_id: str) -> Any:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        case = get_object_or_404(CaseLibrary, pk=object_id)
        if not self.has_change_permission(request, case):  # type: ignore[attr-defined]
            return HttpResponseRedirect(reverse("admin:index"))
        try:
            kept = case_merge(case_id=case.pk, other_id=other_id)
        except ValidationError as error:
            self.message_user(request, "; ".join(error.messages), messages.ERROR)  # type: ignore[attr-defined]
            return HttpResponseRedirect(request.path.rsplit("merge/", 1)[0] + "change/")
        self.message_user(  # type: ignore[attr-defined]
            request,
            _("Merged: the older case “%(title)s” is kept; the other is found through it.")
            % {"title": kept.title},
            messages.SUCCESS,
        )
        return HttpResponseRedirect(reverse("admin:caselibrary_caselibrary_change", args=[kept.pk]))

    @staticmethod
    def _column(case: CaseLibrary) -> SafeString:
        return format_html(
            '<strong>{}</strong><br><span class="quiet">{} · {}</span><p>{}</p><p>{}</p>',
            case.title,
            case.error_code or "–",
            date_format(localtime(case.created_at), "SHORT_DATETIME_FORMAT"),
            case.root_cause,
            "" if case.solution.strip() == case.root_cause.strip() else case.solution,
        )

    def near_duplicates_column(self, obj: CaseLibrary) -> SafeString | str:
        merge = CaseMerge.objects.filter(case_id=obj.pk).first()
        if merge:
            url = reverse("admin:caselibrary_caselibrary_change", args=[merge.merged_into])
            return format_html('{} <a href="{}">{}</a>', _("Merged into"), url, merge.merged_into)
        found = near_duplicates(obj)
        if not found:
            return "–"
        rows = format_html_join(
            "",
            '<tr><td style="width:50%">{}</td><td style="width:50%">{}<p>{} {} '
            '<button type="submit" class="button" formmethod="post" formaction="{}" '
            'name="_merge">{}</button></p></td></tr>',
            (
                (
                    self._column(obj),
                    self._column(other),
                    _("similarity"),
                    f"{similarity:.3f}",
                    reverse("admin:caselibrary_caselibrary_merge", args=[obj.pk, other.pk]),
                    _("Merge into the older case"),
                )
                for other, similarity in found
            ),
        )
        return format_html(
            '<table class="near-duplicates"><thead><tr><th>{}</th><th>{}</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            _("this case"),
            _("says the same"),
            rows,
        )

    near_duplicates_column.short_description = _("near-duplicates")  # type: ignore[attr-defined]
