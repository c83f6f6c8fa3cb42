"""The case page's near-duplicates: side by side, with "merge into" (keeps the older),
confirmed on a page of its own; the list's near-duplicate filter; the delete
confirmation's word on the cases merged into the ones deleted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.defaultfilters import linebreaksbr
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from caselibrary.models import CaseLibrary, CaseMerge
from caselibrary.services.duplicates import (
    case_merge,
    case_merge_pair,
    case_near_duplicates,
    cases_flagged_q,
    merged_cases_count,
)
from diagnosis.admin_times import long_time
from diagnosis.text import isolated


class NearDuplicateFilter(admin.SimpleListFilter):
    """Cases the indexer flagged as saying the same as another, not merged yet."""

    title = _("near-duplicates")
    parameter_name = "near_duplicates"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("yes", _("Yes: to review")), ("no", _("None flagged"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return queryset.filter(cases_flagged_q())
        if self.value() == "no":
            return queryset.exclude(cases_flagged_q())
        return queryset


def _case_url(case_id: str) -> str:
    return reverse("admin:caselibrary_caselibrary_change", args=[case_id])


class NearDuplicatesMixin:
    """For CaseLibraryAdmin: the read-only `near_duplicates_column`, the merge view, the
    near-duplicate filter and the delete confirmations' note on merged cases."""

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

    def get_list_filter(self, request: HttpRequest) -> tuple:
        return (*super().get_list_filter(request), NearDuplicateFilter)  # type: ignore[misc]

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        obj = super().get_object(request, object_id, from_field)  # type: ignore[misc]
        if obj is not None:
            # The read-only column is given the case alone, not the request: the case
            # carries whether this operator may merge it, to offer the button or not.
            obj.may_merge = self.has_change_permission(request, obj)  # type: ignore[attr-defined]
        return obj

    def merge_view(self, request: HttpRequest, object_id: str, other_id: str) -> HttpResponse:
        """GET: the two cases side by side and what merging does; POST: merge them."""
        case = get_object_or_404(CaseLibrary, pk=object_id)
        if not self.has_change_permission(request, case):  # type: ignore[attr-defined]
            raise PermissionDenied
        try:
            if request.method == "POST":
                kept, merged = case_merge(
                    case_id=case.pk, other_id=other_id, updated_by=request.user.get_username()
                )
            else:
                kept, merged = case_merge_pair(case_id=case.pk, other_id=other_id)
        except ValidationError as error:
            self.message_user(request, "; ".join(error.messages), messages.ERROR)  # type: ignore[attr-defined]
            return HttpResponseRedirect(_case_url(case.pk))
        if request.method != "POST":
            return self._merge_confirmation(request, case, kept, merged)
        self.log_change(  # type: ignore[attr-defined]
            request,
            kept,
            gettext("Merged “%(title)s” (%(id)s) into this case.")
            % {"title": isolated(merged.title), "id": merged.pk},
        )
        self.log_change(  # type: ignore[attr-defined]
            request,
            merged,
            gettext("Merged into “%(title)s” (%(id)s).")
            % {"title": isolated(kept.title), "id": kept.pk},
        )
        self.message_user(  # type: ignore[attr-defined]
            request,
            _("Merged: the older case “%(title)s” is kept; the other is found through it.")
            % {"title": isolated(kept.title)},
            messages.SUCCESS,
        )
        return HttpResponseRedirect(_case_url(kept.pk))

    def _merge_confirmation(
        self, request: HttpRequest, case: CaseLibrary, kept: CaseLibrary, merged: CaseLibrary
    ) -> TemplateResponse:
        opts = self.model._meta  # type: ignore[attr-defined]
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "title": _("Merge these two cases?"),
            "opts": opts,
            "object": case,
            "kept": kept,
            "merged": merged,
            "kept_column": self._column(kept),
            "merged_column": self._column(merged),
            "kept_url": _case_url(kept.pk),
            "merged_url": _case_url(merged.pk),
            "back_url": _case_url(case.pk),
        }
        return TemplateResponse(
            request, "admin/caselibrary/caselibrary/merge_confirmation.html", context
        )

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        extra_context = {
            **(extra_context or {}),
            "merged_count": merged_cases_count(case_ids=[unquote(object_id)]),
        }
        return super().delete_view(request, object_id, extra_context)  # type: ignore[misc]

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)  # type: ignore[misc]
        if "delete_selected" in actions:
            func, name, description = actions["delete_selected"]
            actions["delete_selected"] = (_noting_merged_cases(func), name, description)
        return actions

    @staticmethod
    def _column(case: CaseLibrary) -> SafeString:
        # The root cause and the solution line by line (numbered steps one a line),
        # escaped, as the case's own page writes them; its time as the page's others.
        solution = "" if case.solution.strip() == case.root_cause.strip() else case.solution
        return format_html(
            '<strong>{}</strong><br><span class="quiet">{} · {}</span><p>{}</p><p>{}</p>',
            case.title,
            case.error_code or "–",
            long_time(case.created_at),
            linebreaksbr(case.root_cause, autoescape=True),
            linebreaksbr(solution, autoescape=True),
        )

    def near_duplicates_column(self, obj: CaseLibrary) -> SafeString | str:
        merge = CaseMerge.objects.filter(case_id=obj.pk).first()
        if merge:
            url = _case_url(merge.merged_into)
            return format_html('{} <a href="{}">{}</a>', _("Merged into"), url, merge.merged_into)
        found = case_near_duplicates(case=obj)
        if not found:
            return "–"
        may_merge = getattr(obj, "may_merge", False)
        # A link to the confirmation page, not a submit of the change form around it.
        button = '<p>{} {} <a class="button" href="{}">{}</a></p>' if may_merge else "<p>{} {}</p>"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}" + button + "</td></tr>",
            (
                (
                    self._column(obj),
                    self._column(other),
                    _("similarity"),
                    f"{similarity:.3f}",
                    *(
                        (
                            reverse("admin:caselibrary_caselibrary_merge", args=[obj.pk, other.pk]),
                            _("Merge into the older case"),
                        )
                        if may_merge
                        else ()
                    ),
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


def _noting_merged_cases(delete_selected: Callable) -> Callable:
    """Django's bulk delete, whose confirmation page also counts the cases merged into
    the selected ones (they become cases of their own again)."""

    def action(modeladmin: Any, request: HttpRequest, queryset: QuerySet) -> Any:
        response = delete_selected(modeladmin, request, queryset)
        if isinstance(response, TemplateResponse):
            case_ids = list(queryset.values_list("pk", flat=True))
            response.context_data["merged_count"] = merged_cases_count(case_ids=case_ids)
        return response

    action.allowed_permissions = getattr(delete_selected, "allowed_permissions", ())  # type: ignore[attr-defined]
    action.short_description = getattr(delete_selected, "short_description", "")  # type: ignore[attr-defined]
    return action
