"""The case list's filters, and the taxonomy they and the case's fields offer (read once
per request)."""

from collections import Counter
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from caselibrary.models import CaseLibrary
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


def category_names(request: HttpRequest) -> list[tuple[str, str]]:
    """The taxonomy as (code, name) pairs, for the list's category column, too narrow for
    "CODE · name": a name two categories share keeps its code in brackets."""
    # The same read as category_choices, whose labels are "CODE · name" (FaultCategory).
    named = [(code, label.removeprefix(f"{code} · ")) for code, label in category_choices(request)]
    shared = Counter(name for _code, name in named)
    return [(code, f"{name} ({code})" if shared[name] > 1 else name) for code, name in named]


class CategorySelect(forms.Select):
    """The list's category select: each option names its category, its code in the
    option's tooltip (the chosen one's code and whole name are in the select's tooltip,
    should the column cut the name short: change_list.html)."""

    def create_option(self, name: str, value: Any, label: Any, *args: Any, **kwargs: Any) -> dict:
        option = super().create_option(name, value, label, *args, **kwargs)
        if str(value) != str(label):  # a code from before the taxonomy is its own label
            option["attrs"]["title"] = value
        return option


def category_field(request: HttpRequest, label: str, *, in_list: bool = False) -> forms.Field:
    """Where a case's category is chosen: "CODE · name" on the case's page; in a row of the
    list, whose narrow column the operator reads, the name alone."""
    if in_list:
        return forms.ChoiceField(
            label=label, choices=category_names(request), widget=CategorySelect
        )
    return forms.ChoiceField(label=label, choices=category_choices(request))


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
            # The few such cases found first, unordered, then their page by key: in one
            # query MariaDB walked the whole library newest first, joining each case's
            # session, to fill a page that is usually empty (7.4-9.6 s at 95,000 cases,
            # against 1.4-2.0 s so; a 503 past the read timeout at 154,000 under load).
            regretted = CaseLibrary.objects.filter(diagnosis__feedback=Feedback.NOT_USEFUL)
            return queryset.filter(pk__in=list(regretted.order_by().values_list("pk", flat=True)))
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
        # By the hits, not by the row: a merged case keeps a row with its counts at 0.
        found = Q(reuse__l0_hits__gt=0) | Q(reuse__l1_hits__gt=0)
        if self.value() == "hit":
            return queryset.filter(found)
        if self.value() == "never":
            return queryset.exclude(found)
        return queryset
