"""The values a changelist's own filters (SimpleListFilter) are given, checked.

Django refuses a bad lookup of its field filters (`IncorrectLookupParameters`: the list
goes to `?e=1`), but a SimpleListFilter given a value none of its choices has applies no
filter at all, and the list, and its export, hold every row as though none were set.
Here such a value is refused as Django refuses a bad lookup: a choice the filter offers
(its `lookups`, read for this request: a category or a tag deleted since the link was
made is no longer one) is taken, anything else is not.

A filter whose choices are not all among its `lookups` (a list cut short, a value that
names a row) says which values it takes with a method `value_is_known(value) -> bool`.
"""

from typing import Any

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.http import HttpRequest


def unknown_filter_parameters(changelist: Any, request: HttpRequest) -> list[str]:
    """The parameters of the changelist's SimpleListFilters whose value (the last one,
    which the filter applies) is not one the filter takes."""
    specs = {type(spec): spec for spec in changelist.filter_specs}
    unknown = []
    for list_filter in changelist.list_filter:
        if not (isinstance(list_filter, type) and issubclass(list_filter, admin.SimpleListFilter)):
            continue
        name = list_filter.parameter_name
        if name not in request.GET:
            continue
        value = request.GET.getlist(name)[-1]
        # A filter without choices for this request is left out of the list's filters
        # (Django shows only those with output), and takes no value.
        spec = specs.get(list_filter)
        if spec is None or not _takes(spec, value):
            unknown.append(name)
    return unknown


def _takes(spec: admin.SimpleListFilter, value: str) -> bool:
    is_known = getattr(spec, "value_is_known", None)
    if is_known is not None:
        return bool(is_known(value))
    return any(str(choice) == value for choice, _label in spec.lookup_choices)


def check_filter_values(changelist: Any, request: HttpRequest) -> None:
    """Raise IncorrectLookupParameters, as Django does for a bad field lookup, when one
    of the changelist's own filters was given a value it does not take."""
    unknown = unknown_filter_parameters(changelist, request)
    if unknown:
        raise IncorrectLookupParameters(f"unknown value of the filter(s) {', '.join(unknown)}")
