"""`{% may_open_overview as name %}`: whether the overview opens to the page's user, by the
overview's own check, for the pages that link to it (the admin index, the attribution
page's breadcrumbs)."""

from typing import Any

from django import template

from feedback.overview import may_open_overview as _may_open_overview

register = template.Library()


@register.simple_tag(takes_context=True)
def may_open_overview(context: dict[str, Any]) -> bool:
    return _may_open_overview(context["request"])
