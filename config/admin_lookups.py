"""The lookups a changelist's URL may carry.

Django allows any lookup on a model's own fields in the URL (`?query__regex=…`,
`?answer__contains=…`, `?id__gt=…`): a pattern typed into the URL ran over every row, in
the database or, on SQLite, in the web worker. Here a list takes
- the lookups its own filters write (a filter's parameter, a field filter's `exact`,
  `isnull`, date range and `isempty`), and a raw-id popup's `limit_choices_to`;
- a value of a field, as a bookmark or a hand-made link has it (`?session_id=…`,
  `?session__session_id__exact=…`, `?status__in=…`): equality, as before;
- a parameter that names no field at all (`?utm_source=…`, a filter since removed):
  Django's own answer, the list reopened unfiltered at `?e=1`.
Any other lookup on a field (a pattern, a range, a transform) is refused as a filter the
list does not take is: the list reopens at `?e=1` and says so, the export answers 400
naming it (`IncorrectLookupParameters`, not Django's bare 400 logged as a security
error).
"""

from typing import Any

from django.contrib import admin
from django.contrib.admin import widgets
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import NotRelationField, get_fields_from_path
from django.core.exceptions import FieldDoesNotExist
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest

# What Django's field filters write after the field: a value (exact), none (isnull), a
# date range (gte, lt) and the empty-field filter's isempty.
FILTER_LOOKUPS = frozenset({"exact", "isnull", "gte", "lt", "isempty"})
# A value of a field, any field.
EQUALITY = frozenset({"exact", "isnull", "in"})
# A date hierarchy's drill-down.
DATE_PARTS = frozenset({"year", "month", "day"})


class OfferedLookupsMixin:
    """For a ModelAdmin: its list and export take the lookups above only."""

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None) -> bool:
        if not super().lookup_allowed(lookup, value, request):  # type: ignore[misc]
            return False
        model_admin: Any = self
        model = model_admin.model
        return (
            _is_raw_id_choice(model, lookup, value)
            or _is_offered(model_admin, lookup, request)
            or _is_equality(model, lookup)
        )

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        try:
            return super().get_changelist_instance(request)  # type: ignore[misc]
        except DisallowedModelAdminLookup as refused:
            raise IncorrectLookupParameters(str(refused)) from None


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
        if path in paths and len(rest) <= 2 and (not rest or rest[-1] in FILTER_LOOKUPS):
            return True
    return False


def _is_equality(model: Any, lookup: str) -> bool:
    """A field's value (or a parameter naming no field, which Django refuses itself)."""
    parts = lookup.split(LOOKUP_SEP)
    if parts[0] == "pk":
        parts[0] = model._meta.pk.name
    try:
        model._meta.get_field(parts[0])
    except FieldDoesNotExist:
        return True  # no field: the list reopens at ?e=1
    if parts[-1] in EQUALITY:
        parts = parts[:-1]
    try:
        get_fields_from_path(model, LOOKUP_SEP.join(parts))
    except (FieldDoesNotExist, NotRelationField):
        return False  # a field followed by a lookup or transform other than equality
    return True
