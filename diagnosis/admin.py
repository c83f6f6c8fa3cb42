import re
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.db.models.functions import Substr
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.defaultfilters import linebreaksbr
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from caselibrary.selectors import case_id_for_session, session_case_searches
from config.admin_paginator import EstimatedCountAdminMixin
from diagnosis.models import SESSION_ID_REGEX, ApiKey, DiagnosisSession, ToolInvocation
from diagnosis.selectors import (
    EVIDENCE_SCORE,
    ScoreBand,
    score_band,
    sessions_in_score_band,
)
from evaluation.services import sessions_evaluate

admin.site.site_header = _("Diagnosis console")
admin.site.site_title = _("Diagnosis console")
admin.site.index_title = _("Sessions, bad cases and the case library")

# The package's own key model is unused: our ApiKey adds scopes.
admin.site.unregister(APIKey)

QUERY_EXCERPT_LENGTH = 80
# Rescoring more than this from a web request belongs to `manage.py rescore`.
RESCORE_LIMIT = 5_000
_SESSION_ID = re.compile(SESSION_ID_REGEX)


@admin.register(ApiKey)
class ApiKeyAdmin(APIKeyModelAdmin):
    list_display = ("prefix", "name", "scope", "created", "expiry_date", "_has_expired", "revoked")
    list_filter = ("scope", "revoked")

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple:
        fields = super().get_readonly_fields(request, obj)
        return (*fields, "scope") if obj is not None and obj.revoked else fields


# --- Pieces shared by the session and bad-case admins ----------------------------------


def score_badge(score: int | None) -> SafeString:
    """The evidence score as a number on the color of its band."""
    if score is None:
        return format_html('<span class="score score-pending">{}</span>', _("pending"))
    band = score_band(score)
    return format_html(
        '<span class="score score-{}" title="{}">{}</span>',
        band.rstrip("+"),
        ScoreBand(band).label,
        score,
    )


def session_change_url(session_pk: int) -> str:
    return reverse("admin:diagnosis_diagnosissession_change", args=[session_pk])


class EvidenceScoreBandFilter(admin.SimpleListFilter):
    title = _("evidence score")
    parameter_name = "score_band"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return ScoreBand.choices

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        band = self.value()
        if not band:
            return queryset
        if band not in ScoreBand.values:
            raise admin.options.IncorrectLookupParameters(f"unknown score band {band!r}")
        return sessions_in_score_band(queryset, band=band)


class SessionChangeList(ChangeList):
    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet:
        queryset = super().get_queryset(request, exclude_parameters)
        # A page of sessions needs neither the answers nor the whole questions (LONGTEXT
        # each); the excerpt is cut by the database.
        return queryset.defer("query", "answer", "self_evaluation").annotate(
            query_head=Substr("query", 1, QUERY_EXCERPT_LENGTH + 1)
        )


class SessionAdminBase(EstimatedCountAdminMixin, admin.ModelAdmin):
    """Sessions seen by operators: read-only, scored, fast on a million rows."""

    list_per_page = 50
    ordering = ("-created_at",)
    search_fields = ("query",)
    search_help_text = _("An exact session id, or words from the question.")

    class Media:
        css = {"all": ["diagnosis/admin.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(score=EVIDENCE_SCORE)

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return SessionChangeList

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        # `session_id = x OR query LIKE '%x%'` would scan every row even for an id: look
        # the id up on its unique index first and only search the text when it misses.
        term = search_term.strip()
        if _SESSION_ID.fullmatch(term):
            by_id = queryset.filter(session_id=term)
            if by_id.exists():
                return by_id, False
        return super().get_search_results(request, queryset, search_term)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # agents create sessions, through the API

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # sessions are the record of what happened

    # --- columns

    @admin.display(description=_("question"))
    def query_excerpt(self, obj: DiagnosisSession) -> str:
        head = obj.query_head or ""
        return head[:QUERY_EXCERPT_LENGTH] + "…" if len(head) > QUERY_EXCERPT_LENGTH else head

    # Not sortable: ordering a million rows by a value inside JSON is a filesort of the
    # whole table (seconds); the band filter answers "show me the high scores".
    @admin.display(description=_("evidence score"))
    def score_column(self, obj: DiagnosisSession) -> SafeString:
        return score_badge(obj.score)

    # --- detail

    @admin.display(description=_("question"))
    def query_text(self, obj: DiagnosisSession) -> SafeString:
        return format_html('<div class="query-text">{}</div>', linebreaksbr(obj.query))

    @admin.display(description=_("answer"))
    def answer_text(self, obj: DiagnosisSession) -> SafeString:
        if not obj.answer:
            return format_html("<em>{}</em>", _("no answer"))
        # linebreaksbr escapes the text before it adds the <br>s.
        return format_html('<div class="answer-text">{}</div>', linebreaksbr(obj.answer))

    @admin.display(description=_("evidence score"))
    def score_detail(self, obj: DiagnosisSession) -> SafeString:
        source = (obj.self_evaluation or {}).get("source")
        badge = score_badge(obj.score)
        return format_html("{} <small>{}</small>", badge, source) if source else badge

    @admin.display(description=_("scored factors"))
    def factors_table(self, obj: DiagnosisSession) -> SafeString:
        factors = [
            f for f in (obj.self_evaluation or {}).get("factors") or [] if isinstance(f, dict)
        ]
        if not factors:
            return format_html("<em>{}</em>", _("not scored yet"))
        rows = format_html_join(
            "",
            '<tr><td><code>{}</code></td><td class="delta">{}</td><td>{}</td></tr>',
            (
                (f.get("name", ""), _signed(f.get("delta")), f.get("description", ""))
                for f in factors
            ),
        )
        return format_html(
            '<table class="factors"><thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            _("factor"),
            _("delta"),
            _("description"),
            rows,
        )

    @admin.display(description=_("opinion"))
    def opinion_table(self, obj: DiagnosisSession) -> SafeString:
        """The opinion's factors (self_evaluation.llm_opinion) beside the rule factors."""
        opinion = (obj.self_evaluation or {}).get("llm_opinion")
        if not isinstance(opinion, dict):
            return format_html("<em>{}</em>", _("no opinion yet"))
        factors = [f for f in opinion.get("factors") or [] if isinstance(f, dict)]
        rows = format_html_join(
            "",
            '<tr><td><code>{}</code></td><td class="opinion-value">{}</td><td>{}</td></tr>',
            ((f.get("name", ""), _yes_no(f.get("value")), f.get("rationale", "")) for f in factors),
        )
        return format_html(
            '<table class="factors opinion"><caption>{} · {} · {} {} · {}</caption>'
            "<thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>{}</tbody></table>",
            opinion.get("source", ""),
            opinion.get("model", ""),
            _("version"),
            opinion.get("version", ""),
            opinion.get("created_at", ""),
            _("factor"),
            _("value"),
            _("rationale"),
            rows,
        )


def _yes_no(value: Any) -> str:
    if value is True:
        return str(_("yes"))
    if value is False:
        return str(_("no"))
    return ""


def _signed(delta: Any) -> str:
    if isinstance(delta, int) and delta > 0:
        return f"+{delta}"
    if isinstance(delta, int) and delta < 0:
        return f"−{-delta}"
    return str(delta if delta is not None else "")


# --- Sessions -------------------------------------------------------------------------


class ToolInvocationInline(admin.TabularInline):
    """The session's tool calls, read-only, in the order they were recorded."""

    model = ToolInvocation
    fields = (
        "tool_name",
        "kind",
        "status",
        "match_level",
        "hit_count",
        "query",
        "error_message",
        "duration_ms",
        "created_at",
    )
    readonly_fields = fields
    ordering = ("id",)
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Whoever may see the session sees its facts; no separate grant needed.
        return request.user.has_perm("diagnosis.view_diagnosissession") or request.user.has_perm(
            "diagnosis.change_diagnosissession"
        )


@admin.register(DiagnosisSession)
class DiagnosisSessionAdmin(SessionAdminBase):
    list_display = (
        "session_id",
        "query_excerpt",
        "status",
        "feedback",
        "score_column",
        "created_at",
    )
    list_filter = (
        "status",
        "feedback",
        EvidenceScoreBandFilter,
        ("created_at", admin.DateFieldListFilter),
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
        (
            _("Evidence"),
            {"fields": ("score_detail", "factors_table", "opinion_table", "case_searches_table")},
        ),
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
        "score_detail",
        "factors_table",
        "opinion_table",
        "case_searches_table",
    )
    inlines = (ToolInvocationInline,)
    actions = ("rescore", "create_case")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Allowed on the list (so the actions show), never on one session: the detail
        # page is read-only. Sessions change through the API and the actions' services.
        return obj is None and super().has_change_permission(request)

    def has_create_case_permission(self, request: HttpRequest) -> bool:
        return self._can_create_case(request.user)

    @admin.display(description=_("case"))
    def case_link(self, obj: DiagnosisSession) -> SafeString:
        case_id = case_id_for_session(session_id=obj.session_id)
        if case_id is not None:
            url = reverse("admin:caselibrary_caselibrary_change", args=[case_id])
            return format_html('<a href="{}">{}</a>', url, _("open the case"))
        if not getattr(obj, "can_create_case", False):
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
        searches = list(session_case_searches(session_id=obj.session_id))
        if not searches:
            return format_html("<em>{}</em>", _("none"))
        repeats = sum(search.is_repeat for search in searches)
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    search.query,
                    search.match_level,
                    search.hit_count,
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
        written = sum(
            sessions_evaluate(sessions=selected[start : start + 500])
            for start in range(0, len(selected), 500)
        )
        self.message_user(
            request,
            ngettext("%(count)d session rescored.", "%(count)d sessions rescored.", written)
            % {"count": written},
            messages.SUCCESS,
        )
        still_running = len(selected) - written
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
        session_ids = list(queryset.values_list("session_id", flat=True)[:2])
        if len(session_ids) != 1:
            self.message_user(
                request, _("Select exactly one session to create a case from."), messages.WARNING
            )
            return None
        session_id = session_ids[0]
        case_id = case_id_for_session(session_id=session_id)
        if case_id is not None:
            self.message_user(
                request,
                _("Session %(session)s already has a case: here it is.") % {"session": session_id},
                messages.INFO,
            )
            return HttpResponseRedirect(
                reverse("admin:caselibrary_caselibrary_change", args=[case_id])
            )
        url = reverse("admin:caselibrary_caselibrary_add")
        return HttpResponseRedirect(f"{url}?{urlencode({'from_session': session_id})}")
