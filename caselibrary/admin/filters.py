"""The case list's filters, and the taxonomy they offer (read once per request)."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from caselibrary.selectors import (
    cases_awaiting_curation,
    cases_curated,
    fault_category_choices,
)
from diagnosis.models import Feedback


def category_choices(request: HttpRequest) -> list[tuple[str, str]]:
    # The filter, the list's editable column and the action all offer the taxonomy:
    # read it once per request, not once per row.
    if not hasattr(request, "_fault_category_choices"):
        request._fault_category_choices = fault_category_choices()
    return request._fault_category_choices


class FaultCategoryFilter(admin.SimpleListFilter):
    title = _("fault category")
    parameter_name = "fault_category"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return category_choices(request)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(fault_category=self.value()) if self.value() else queryset


class StillGeneralFilter(admin.SimpleListFilter):
    """Cases still GENERAL, and AUTO cases no operator has changed since the system made
    and structured them (caselibrary/selectors.py AWAITING_CURATION).

    Its class and parameter keep the names they had when it meant GENERAL only: the
    overview, the export links and bookmarks use `still_general=yes|no`.
    """

    title = _("awaiting curation")
    parameter_name = "still_general"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("yes", _("Yes")), ("no", _("No: curated by an operator"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return cases_awaiting_curation(queryset)
        if self.value() == "no":
            return cases_curated(queryset)
        return queryset


class SessionNowNotUsefulFilter(admin.SimpleListFilter):
    """Cases made from a session whose user later changed their mind."""

    title = _("its session is now not useful")
    parameter_name = "session_not_useful"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("yes", _("Yes"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return queryset.filter(diagnosis__feedback=Feedback.NOT_USEFUL)
        return queryset


class ReuseFilter(admin.SimpleListFilter):
    """How cases fare once found: the stale ones (found often, rated not useful) first."""

    title = _("reuse")
    parameter_name = "reuse"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [
            ("stale", _("Stale: found often, rated not useful")),
            ("hit", _("Found at least once")),
            ("never", _("Never found")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "stale":
            return queryset.filter(reuse__stale=True)
        if self.value() == "hit":
            return queryset.filter(reuse__isnull=False)
        if self.value() == "never":
            return queryset.filter(reuse__isnull=True)
        return queryset
