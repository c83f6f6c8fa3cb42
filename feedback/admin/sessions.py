"""The sessions' admin. Registered here, in the app that may import every other one: the
page shows the session's case and case-library searches (caselibrary) and the scoring
factors by name (evaluation). Rescoring goes to the evaluation app's task by its name."""

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db.models import BooleanField, Case, Exists, OuterRef, QuerySet, Value, When
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from caselibrary.models import CaseLibrary, CaseSearchHit
from caselibrary.services.cases import session_can_become_case
from config.admin_paginator import IndexOrderChangeList
from config.admin_site import model_pages_of
from config.queue import enqueue_on_commit
from diagnosis.admin import EvidenceScoreBandFilter, SessionAdminBase, SessionChangeList
from diagnosis.admin_times import list_time_column
from diagnosis.models import DiagnosisSession, SessionStatus, Span
from evaluation.services import SCORABLE_STATUSES
from feedback.admin.evidence import EvidenceTablesMixin
from feedback.admin.invocations import session_invocations_table
from feedback.admin.reader_history import ReaderHistoryMixin
from feedback.admin.timeline import span_attributes_html, timeline_html

# Rescoring more than this from a web request belongs to `manage.py rescore`.
RESCORE_LIMIT = 5_000
RESCORE_TASK = "evaluation.tasks.sessions_rescore"
RESCORE_BATCH = 500

# A placeholder (diagnosis/otlp_placeholders.py): a running session named by the trace id
# of spans it holds, stored so because none of them named their session yet. Read in the
# statement that reads the page's rows (the count reads only keys), for running sessions
# only, off the spans' (trace id, span id) index.
AWAITS_SESSION_ID = Case(
    When(
        status=SessionStatus.RUNNING,
        then=Exists(
            Span.objects.filter(session_id=OuterRef("session_id"), trace_id=OuterRef("session_id"))
        ),
    ),
    default=Value(False),
    output_field=BooleanField(),
)


class SessionsChangeList(IndexOrderChangeList, SessionChangeList):
    """Sorted by status, feedback or creation time in either direction, a page is read
    off the (status, created_at), (feedback, created_at) or (created_at) index."""


def case_of(session: DiagnosisSession) -> Any:
    """The case made from the session, if any (the reverse of the case's session key)."""
    try:
        return session.case
    except ObjectDoesNotExist:
        return None


class FoundCaseFilter(admin.SimpleListFilter):
    """The sessions whose case-library searches found a case (`?found_case=<caseId>`, the
    link of the case page's hit count); shown only while it is applied."""

    title = _("found the case")
    parameter_name = "found_case"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        value = request.GET.get(self.parameter_name)
        return [(value, value)] if value else []

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if not self.value():
            return queryset
        hits = CaseSearchHit.objects.filter(case_id=self.value()).values("session_id")
        return queryset.filter(session_id__in=hits)


def _waiting_badge() -> SafeString:
    """A placeholder is no session an operator can wait on for a score: its spans move to
    their session when a span of the trace names it (or it completes as a session of its
    own, keyed by the trace id, when the trace's root arrives naming none)."""
    return format_html(
        '<span class="score score-pending score-waiting" title="{}">{}</span>',
        _(
            "Spans kept under their trace id: none of them named their session yet. They "
            "move to that session when a span of the trace names it."
        ),
        _("waiting for the session id"),
    )


@admin.register(DiagnosisSession)
class DiagnosisSessionAdmin(ReaderHistoryMixin, EvidenceTablesMixin, SessionAdminBase):
    list_display = (
        "session_id",
        "query_excerpt",
        "status",
        "feedback",
        "score_column",
        "created_at_column",
    )
    list_filter = (
        "status",
        "feedback",
        EvidenceScoreBandFilter,
        ("created_at", admin.DateFieldListFilter),
        FoundCaseFilter,
    )
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "session_id",
                    "user_id",
                    "status",
                    "feedback",
                    "created_at",
                    "finished_at",
                    "feedback_at",
                    "case_link",
                )
            },
        ),
        (_("Question and answer"), {"fields": ("query_text", "answer_text")}),
        # Also once a later verdict has taken the session out of the bad-case queue.
        (_("What readers said"), {"fields": ("feedback_history",)}),
        (
            _("Evidence"),
            {"fields": ("score_detail", "factors_table", "opinion_table", "case_searches_table")},
        ),
        (_("Tool invocations"), {"fields": ("invocations_table",)}),
        (_("Timeline"), {"fields": ("timeline",)}),
    )
    readonly_fields = (
        "session_id",
        "user_id",
        "status",
        "feedback",
        "created_at",
        "finished_at",
        "feedback_at",
        "case_link",
        "query_text",
        "answer_text",
        "feedback_history",
        "score_detail",
        "factors_table",
        "opinion_table",
        "case_searches_table",
        "invocations_table",
        "timeline",
    )
    actions = ("rescore", "create_case")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(awaits_session_id=AWAITS_SESSION_ID)

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return SessionsChangeList

    # As every list writes a time (diagnosis/admin_times.py); the page keeps Django's form.
    created_at_column = list_time_column("created_at", _("created at"))

    @admin.display(description=_("evidence score"))
    def score_column(self, obj: DiagnosisSession) -> SafeString:
        if getattr(obj, "awaits_session_id", False):
            return _waiting_badge()
        return super().score_column(obj)

    @admin.display(description=_("evidence score"))
    def score_detail(self, obj: DiagnosisSession) -> SafeString:
        if getattr(obj, "awaits_session_id", False):
            return _waiting_badge()
        return super().score_detail(obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Allowed on the list (so the actions show), never on one session: the detail
        # page is read-only. Sessions change through the API and the actions' services.
        return obj is None and super().has_change_permission(request)

    def has_create_case_permission(self, request: HttpRequest) -> bool:
        return self._can_create_case(request.user)

    @admin.display(description=_("case"))
    def case_link(self, obj: DiagnosisSession) -> SafeString:
        case = case_of(obj)
        if case is not None:
            if not model_pages_of(obj).open(CaseLibrary):
                return case.title  # its page does not open to this operator
            url = reverse("admin:caselibrary_caselibrary_change", args=[case.pk])
            return format_html('<a href="{}">{}</a>', url, _("open the case"))
        if not getattr(obj, "can_create_case", False) or not session_can_become_case(session=obj):
            return format_html("<em>{}</em>", _("none"))
        url = reverse("admin:caselibrary_caselibrary_add")
        return format_html(
            '<a href="{}?{}">{}</a>',
            url,
            urlencode({"from_session": obj.session_id}),
            _("create a case from this session"),
        )

    @admin.display(description=_("case-library searches"))
    def case_searches_table(self, obj: DiagnosisSession) -> SafeString:
        searches = list(obj.case_searches.order_by("id"))
        if not searches:
            return format_html("<em>{}</em>", _("none"))
        repeats = sum(search.is_repeat for search in searches)
        # The cases each search found, linked to their pages (one query for all titles).
        found = {c for search in searches for c in search.case_ids or []}
        titles = dict(CaseLibrary.objects.filter(case_id__in=found).values_list("case_id", "title"))
        pages = model_pages_of(obj)  # a title links to its case only where that opens

        def cases(search: Any) -> SafeString:
            links = format_html_join(
                mark_safe("<br>"),
                "{}",
                (
                    (
                        pages.link(
                            CaseLibrary,
                            reverse("admin:caselibrary_caselibrary_change", args=[c]),
                            titles[c],
                        ),
                    )
                    for c in search.case_ids or []
                    if c in titles
                ),
            )
            return format_html("{}<br>{}", search.hit_count, links) if links else search.hit_count

        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    search.query,
                    search.match_level,
                    cases(search),
                    _("repeat") if search.is_repeat else "",
                )
                for search in searches
            ),
        )
        return format_html(
            '<p id="duplicate-recalls">{}</p><table class="factors"><thead><tr><th>{}</th>'
            "<th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>{}</tbody></table>",
            ngettext("%(count)d duplicate recall", "%(count)d duplicate recalls", repeats)
            % {"count": repeats},
            _("query"),
            _("match level"),
            _("hits"),
            _("repeated recall"),
            rows,
        )

    @admin.display(description=_("tool invocations"))
    def invocations_table(self, obj: DiagnosisSession) -> SafeString:
        return session_invocations_table(session_id=obj.session_id)

    @admin.display(description=_("timeline"))
    def timeline(self, obj: DiagnosisSession) -> SafeString:
        return timeline_html(obj)

    def get_urls(self) -> list[URLPattern]:
        attributes = path(
            "<path:object_id>/spans/<int:span_key>/attributes/",
            self.admin_site.admin_view(self.span_attributes_view),
            name="diagnosis_diagnosissession_span_attributes",
        )
        return [attributes, *super().get_urls()]

    def span_attributes_view(
        self, request: HttpRequest, object_id: str, span_key: int
    ) -> HttpResponse:
        """The attributes of one span of the session, the table its timeline row shows
        once opened (feedback/admin/timeline.py)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        session = self.get_object(request, unquote(object_id))
        if session is None:
            raise Http404
        span = get_object_or_404(Span, pk=span_key, session_id=session.session_id)
        return HttpResponse(span_attributes_html(span))

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        obj = super().get_object(request, object_id, from_field)
        if obj is not None:
            # Display methods see only the object, and the "create a case" link is only
            # for those who may use it.
            obj.can_create_case = self._can_create_case(request.user)
        return obj

    @staticmethod
    def _can_create_case(user: Any) -> bool:
        return bool(user and user.has_perm("caselibrary.add_caselibrary"))

    @admin.action(
        description=_("Rescore the evidence of the selected sessions"), permissions=["change"]
    )
    def rescore(self, request: HttpRequest, queryset: QuerySet) -> None:
        selected = list(queryset.values_list("session_id", "status")[: RESCORE_LIMIT + 1])
        if len(selected) > RESCORE_LIMIT:
            self.message_user(
                request,
                _(
                    "More than %(limit)d sessions selected: narrow the selection, or run "
                    "`manage.py rescore` for a backfill."
                )
                % {"limit": RESCORE_LIMIT},
                messages.WARNING,
            )
            return
        finished = [sid for sid, status in selected if status in SCORABLE_STATUSES]
        # The scoring runs on the workers, after this request commits.
        for start in range(0, len(finished), RESCORE_BATCH):
            enqueue_on_commit(RESCORE_TASK, finished[start : start + RESCORE_BATCH])
        self.message_user(
            request,
            ngettext(
                "%(count)d session queued for rescoring.",
                "%(count)d sessions queued for rescoring.",
                len(finished),
            )
            % {"count": len(finished)},
            messages.SUCCESS,
        )
        still_running = len(selected) - len(finished)
        if still_running:
            self.message_user(
                request,
                ngettext(
                    "%(count)d session is still running and was left alone.",
                    "%(count)d sessions are still running and were left alone.",
                    still_running,
                )
                % {"count": still_running},
                messages.WARNING,
            )

    @admin.action(
        description=_("Create a case from the selected session"), permissions=["create_case"]
    )
    def create_case(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        sessions = list(queryset.only("session_id", "status", "answer")[:2])
        if len(sessions) != 1:
            self.message_user(
                request, _("Select exactly one session to create a case from."), messages.WARNING
            )
            return None
        session = sessions[0]
        case = case_of(session)
        if case is not None:
            self.message_user(
                request,
                _("Session %(session)s already has a case: here it is.")
                % {"session": session.session_id},
                messages.INFO,
            )
            return HttpResponseRedirect(
                reverse("admin:caselibrary_caselibrary_change", args=[case.pk])
            )
        if not session_can_become_case(session=session):
            self.message_user(
                request,
                _(
                    "Session %(session)s has no answer to make a case of: only finished "
                    "sessions with an answer become cases."
                )
                % {"session": session.session_id},
                messages.WARNING,
            )
            return None
        url = reverse("admin:caselibrary_caselibrary_add")
        return HttpResponseRedirect(f"{url}?{urlencode({'from_session': session.session_id})}")
