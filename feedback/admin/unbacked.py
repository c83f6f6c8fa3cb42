"""Useful answers the tools barely backed: a read-only queue that leads to the session
(to make a case or a doc of it) and to the case already made from it."""

from typing import Any

from django.contrib import admin
from django.db.models import F, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from caselibrary.models import CaseLibrary
from config.admin_icons import yes_no_icon
from config.admin_site import model_pages_of
from diagnosis.admin import SessionAdminBase, session_change_url
from diagnosis.admin_times import list_time_column
from diagnosis.models import DiagnosisSession
from feedback.models import UsefulWithoutEvidence
from feedback.selectors import sessions_useful_without_evidence


class FeedbackDateFilter(admin.DateFieldListFilter):
    """By the feedback's date. Every session of the queue has one: the "no date" and "has
    date" choices Django adds for a column that may be empty would mean nothing here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.links = tuple(
            (title, params)
            for title, params in self.links
            if self.lookup_kwarg_isnull not in params
        )


@admin.register(UsefulWithoutEvidence)
class UsefulWithoutEvidenceAdmin(SessionAdminBase):
    """Useful answers scored below 40: what the agent knew that its tools did not find.
    Read-only; open a session to make a case or a doc from it."""

    # The columns are named apart from the model's fields: a list column named like a
    # field ("session_id") shows the field, not the admin's method of that name.
    list_display = (
        "session_link",
        "query_excerpt",
        "score_column",
        "case_column",
        "feedback_at_column",
        "created_at_column",
    )
    # Latest judgement first, on the index of (feedback, feedback_at): ordered by creation,
    # MariaDB walked the creation-date index past every session without feedback (531 ->
    # 28 ms a page at 381,000 sessions, admin benchmark).
    ordering = ("-feedback_at",)
    list_filter = (("feedback_at", FeedbackDateFilter),)
    readonly_fields = ("session_id",)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The case's key rides along on a LEFT JOIN over the case's unique session key,
        # instead of a query per row.
        return sessions_useful_without_evidence(super().get_queryset(request)).annotate(
            case_pk=F("case__case_id")
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None and super().has_change_permission(request)

    def get_list_display_links(self, request: HttpRequest, list_display: Any) -> None:
        return None

    @admin.display(description=_("session id"), ordering="session_id")
    def session_link(self, obj: UsefulWithoutEvidence) -> SafeString:
        # The session's page asks for the sessions' own permission, not this queue's.
        return model_pages_of(obj).link(
            DiagnosisSession, session_change_url(obj.pk), obj.session_id
        )

    # As every list writes a time (diagnosis/admin_times.py).
    feedback_at_column = list_time_column("feedback_at", _("feedback at"))
    created_at_column = list_time_column("created_at", _("created at"))

    @admin.display(description=_("case"))
    def case_column(self, obj: UsefulWithoutEvidence) -> SafeString | str:
        if obj.case_pk is None:
            return "–"
        if not model_pages_of(obj).open(CaseLibrary):
            return yes_no_icon(True)  # it has one, which this operator may not open
        url = reverse("admin:caselibrary_caselibrary_change", args=[obj.case_pk])
        return format_html('<a href="{}">{}</a>', url, _("open the case"))
