"""The admin lists' times, in one form on every list that shows the same sessions (the
bad cases, the sessions, the useful answers without evidence, the tool invocations, the
API keys): the day above the time ("2026-09-30" over "22:59", ten characters wide), the
same in both languages. Django's formats took four lines a cell in English ("Sept. 30,"
"2026," "10:59" "p.m.") and 90 px a column in Chinese ("2026年12月31日"), and one list
said "2027-01-01 00:30" where the next said "Jan. 1, 2027, 12:30 a.m.". The whole time,
in Django's format, is in the tooltip; the detail pages keep Django's format."""

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.contrib import admin
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timezone import localtime


def long_time(value: datetime) -> str:
    """As Django's admin writes a time, in the reader's language."""
    return date_format(localtime(value), "DATETIME_FORMAT")


def list_time(value: datetime | None) -> SafeString | None:
    """The time as a list writes it: its day and its time, the whole in the tooltip."""
    if value is None:
        return None  # the admin's "-"
    local = localtime(value)
    return format_html(
        '<time class="list-time" datetime="{}" title="{}"><span>{}</span> <span>{}</span></time>',
        local.isoformat(),
        long_time(local),
        f"{local:%Y-%m-%d}",
        f"{local:%H:%M}",
    )


def list_time_column(field: str, description: Any) -> Callable[[Any, Any], SafeString | None]:
    """A list column writing the model's time `field` so, sorted by that field (name it
    `<field>_column`: a column named like the field would show the field)."""

    @admin.display(description=description, ordering=field)
    def column(self: Any, obj: Any) -> SafeString | None:
        return list_time(getattr(obj, field))

    column.__name__ = column.__qualname__ = f"{field}_column"
    return column
