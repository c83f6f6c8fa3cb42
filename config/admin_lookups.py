"""The lookups a changelist's URL may carry: those its own filters write, nothing else.

Django allows any lookup on a model's own fields in the URL (`?query__regex=…`,
`?answer__contains=…`) and refuses only lookups through relations the list does not
filter on. Here a list takes the parameters of its filters alone (and a raw-id popup's
`limit_choices_to`, as Django does); anything else is refused as Django refuses such a
relation (`DisallowedModelAdminLookup`: a 400), on the page and in its export. A pattern
match typed into the URL otherwise ran over every row, in the database or, on SQLite,
in the web worker.
"""

from typing import Any

from django.contrib import admin
from django.contrib.admin import widgets
from django.contrib.admin.utils import get_fields_from_path
from django.core.exceptions import FieldDoesNotExist
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest

# What Django's field filters write after the field: a value (exact), none (isnull), a
# date range (gte, lt) and the empty-field filter's isempty.
FILTER_LOOKUPS = frozenset({"exact", "isnull", "gte", "lt", "isempty"})
# A date hierarchy's drill-down.
DATE_PARTS = frozenset({"year", "month", "day"})


class OfferedLookupsMixin:
    """For a ModelAdmin: its list and export take the lookups its filters write only."""

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None) -> bool:
        if not super().lookup_allowed(lookup, value, request):  # type: ignore[misc]
            return False
        model_admin: Any = self
        return _is_raw_id_choice(model_admin.model, lookup, value) or _is_offered(
            model_admin, lookup, request
        )


def _is_raw_id_choice(model: Any, lookup: str, value: str) -> bool:
    # A raw-id popup carries its field's limit_choices_to (Django's own rule).
    for fk_lookup in model._meta.related_fkey_lookups:
        if callable(fk_lookup):
            fk_lookup = fk_lookup()
        if (lookup, value) in widgets.url_params_from_lookup_dict(fk_lookup).items():
            return True
    return False


def _is_offered(model_admin: Any, lookup: str, request: HttpRequest | None) -> bool:
    list_filter = model_admin.get_list_filter(request) if request else model_admin.list_filter
    names: set[str] = set()
    paths: set[str] = set()
    for item in list_filter:
        if isinstance(item, type) and issubclass(item, admin.SimpleListFilter):
            names.add(item.parameter_name)
        elif isinstance(item, (list, tuple)):
            paths.add(item[0])
        elif isinstance(item, str):
            paths.add(item)
    if lookup in names:
        return True
    hierarchy = model_admin.date_hierarchy
    parts = lookup.split(LOOKUP_SEP)
    for end in range(len(parts), 0, -1):
        path, rest = LOOKUP_SEP.join(parts[:end]), parts[end:]
        if path == hierarchy and rest and set(rest) <= DATE_PARTS:
            return True
        if path in paths:
            return _written_by_a_field_filter(model_admin.model, path, rest)
    return False


def _written_by_a_field_filter(model: Any, path: str, rest: list[str]) -> bool:
    if len(rest) == 1:
        return rest[0] in FILTER_LOOKUPS
    if len(rest) == 2 and rest[1] == "exact":
        # A related field's filter names the key of the row it points to.
        try:
            field = get_fields_from_path(model, path)[-1]
        except FieldDoesNotExist:
            return False
        target = getattr(field, "target_field", None)
        return field.is_relation and rest[0] in {"pk", getattr(target, "name", "pk")}
    return not rest
