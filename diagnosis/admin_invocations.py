"""The tool invocations as a list of their own: read-only, a page at a time.

A session's page shows its first calls (feedback/admin/invocations.py); a session of
20,000 (an agent in a loop, a long trace) links here for all of them, filtered by
session. The calls are part of the session's record: whoever may read sessions reads
them, and no one adds, changes or deletes one here.
"""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from config.admin_lookups import OfferedLookupsMixin
from config.admin_paginator import EstimatedCountAdminMixin
from diagnosis.admin_excerpts import TOOLTIP_CHARS, cut, whole_text_link
from diagnosis.admin_times import list_time_column
from diagnosis.models import SESSION_ID_LOOKUP_PATTERN, DiagnosisSession, ToolInvocation

# A query or an error longer than this is cut in the list, and in its tooltip to
# TOOLTIP_CHARS (an agent may send 96 KB in each call: 100 of them made a page 11 MB),
# with a link to the call's own page, where it is whole (diagnosis/admin_excerpts.py).
# The list shows three lines of it at most (admin.css, `.invocation-excerpt`).
EXCERPT_CHARS = 80


def session_invocations_url(session_id: str) -> str:
    """The list of the session's calls, in the order they were recorded."""
    url = reverse("admin:diagnosis_toolinvocation_changelist")
    return f"{url}?{urlencode({SessionFilter.parameter_name: session_id})}"


class SessionFilter(admin.SimpleListFilter):
    """The calls of one session (`?session=<session id>`, the link under a session's
    table of calls); shown only while it is applied, as a list of every session would
    be a million choices."""

    title = _("session")
    parameter_name = "session"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        value = request.GET.get(self.parameter_name)
        return [(value, value)] if value and SESSION_ID_LOOKUP_PATTERN.fullmatch(value) else []

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        # Off the unique (session_id, invocation_id) index.
        return queryset.filter(session_id=self.value()) if self.value() else queryset


def _excerpt(text: str | None, pk: int) -> SafeString | str:
    if not text:
        return ""
    tooltip, was_cut = cut(text, TOOLTIP_CHARS)
    line = format_html(
        '<span class="invocation-excerpt" title="{}">{}</span>',
        tooltip,
        Truncator(tooltip).chars(EXCERPT_CHARS),
    )
    if not was_cut:
        return line
    # Longer than its tooltip: the call's own page has it whole.
    return format_html("{} {}", line, whole_text_link(total=len(text), pk=pk))


@admin.register(ToolInvocation)
class ToolInvocationAdmin(OfferedLookupsMixin, EstimatedCountAdminMixin, admin.ModelAdmin):
    list_display = (
        "tool_name",
        "kind",
        "status",
        "match_level",
        "hit_count",
        "query_excerpt",
        "error_excerpt",
        "duration_ms",
        "created_at_column",
        "session_link",
    )
    list_filter = (SessionFilter, "kind", "status")
    list_select_related = ("session",)
    list_per_page = 100
    # Sorted by a column, a page of a million calls would be a sort of them all.
    sortable_by = ()
    actions = None

    class Media:
        css = {"all": ["diagnosis/admin.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The session rides along for its link: its key, not its question and answer.
        return (
            super()
            .get_queryset(request)
            .defer("session__query", "session__answer", "session__self_evaluation")
        )

    def get_ordering(self, request: HttpRequest) -> list[str]:
        # A session's calls in the order recorded, as on its page (whose first rows these
        # continue); across sessions, the latest first.
        return ["id"] if request.GET.get(SessionFilter.parameter_name) else ["-id"]

    def count_exactly(self, request: HttpRequest) -> bool:
        # One session's calls are counted off the unique (session_id, invocation_id)
        # index, cheap at 20,000 of them: the list says the number the session's page
        # says, and links to its last page. Across sessions the count stays capped.
        return bool(request.GET.get(SessionFilter.parameter_name))

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        session_id = request.GET.get(SessionFilter.parameter_name, "")
        if SESSION_ID_LOOKUP_PATTERN.fullmatch(session_id):
            # The page a session's table links to is named for the session.
            title = _("Tool invocations of session %(session)s") % {"session": session_id}
            extra_context = {**(extra_context or {}), "title": title}
        return super().changelist_view(request, extra_context)

    def get_list_display_links(self, request: HttpRequest, list_display: Any) -> None:
        return None  # every column is in the row already; there is nothing to edit

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The session's own permission, as on the session's page: the calls are part of
        # its record, and `view_toolinvocation` alone opens nothing.
        opts = DiagnosisSession._meta
        return any(
            request.user.has_perm(f"{opts.app_label}.{action}_{opts.model_name}")
            for action in ("view", "change")
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # agents record calls, through the API

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the record of what happened

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # deleted with their session only

    @admin.display(description=_("tool query"))
    def query_excerpt(self, obj: ToolInvocation) -> SafeString | str:
        return _excerpt(obj.query, obj.pk)

    @admin.display(description=_("error message"))
    def error_excerpt(self, obj: ToolInvocation) -> SafeString | str:
        return _excerpt(obj.error_message, obj.pk)

    # As every list writes a time (diagnosis/admin_times.py), the session's among them.
    created_at_column = list_time_column("created_at", _("created at"))

    @admin.display(description=_("session"))
    def session_link(self, obj: ToolInvocation) -> SafeString:
        url = reverse("admin:diagnosis_diagnosissession_change", args=[obj.session.pk])
        return format_html('<a href="{}">{}</a>', url, obj.session_id)
