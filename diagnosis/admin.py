"""The diagnosis app's admin: API keys, the tool catalog, and the pieces every session
admin shares (the task queue's lists: diagnosis/task_queue_admin.py).

The sessions' own admin pages show what the other apps know about a session (its case,
its case-library searches, the scoring factors' labels), so they are registered by the
feedback app (feedback/admin/), which may import them all; nothing here imports an app
above this one.
"""

import re
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.db.models.functions import Substr
from django.http import HttpRequest, HttpResponse
from django.template.defaultfilters import linebreaksbr
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from config.admin_icons import yes_no_icon
from config.admin_lookups import OfferedLookupsMixin
from config.admin_paginator import EstimatedCountAdminMixin
from config.admin_site import ModelPagesMixin
from config.admin_superuser import SuperuserOnlyAdminMixin
from diagnosis.admin_times import list_time, list_time_column
from diagnosis.api_key_admin_page import new_key_page
from diagnosis.models import (
    SESSION_ID_LOOKUP_PATTERN,
    ApiKey,
    ApiKeyScope,
    DiagnosisSession,
    LevelRule,
    SessionStatus,
    ToolCatalogEntry,
)
from diagnosis.selectors import (
    EVIDENCE_SCORE,
    ScoreBand,
    score_band,
    sessions_in_score_band,
    tool_catalog_room,
)

admin.site.site_header = _("Diagnosis console")
admin.site.site_title = _("Diagnosis console")
admin.site.index_title = _("Sessions, bad cases and the case library")
# This service has no public site: "/" is a 404, so the header links to no "View site".
admin.site.site_url = None

# The package's own key model is unused: our ApiKey adds scopes.
admin.site.unregister(APIKey)

QUERY_EXCERPT_LENGTH = 80
# Who scored a session (self_evaluation.source, a value of the API's contract), in words.
SCORE_SOURCES = {"rule": _("by the rules")}


# The package's fields `prefix`, `name`, `created` and `revoked` have no verbose name to
# translate: the admin would call them so, in English. Read-only, they are shown through
# these methods, which have a label in the operator's language.
_SHOWN_AS = {"prefix": "key_prefix", "name": "key_name", "revoked": "key_revoked"}


class RevokedFilter(admin.BooleanFieldListFilter):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.title = _("revoked or not")


class ApiKeyForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ("name", "scope", "expiry_date", "revoked")
        labels = {"name": _("name"), "revoked": _("revoked")}


@admin.register(ApiKey)
class ApiKeyAdmin(OfferedLookupsMixin, SuperuserOnlyAdminMixin, APIKeyModelAdmin):
    """A key is a credential: superusers only, whatever permissions staff hold."""

    form = ApiKeyForm
    list_display = (
        "key_prefix",
        "key_name",
        "scope",
        "key_created",
        "key_expiry",
        "key_has_expired",
        "key_revoked",
    )
    list_filter = ("scope", ("revoked", RevokedFilter))

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        # The model's default (full) stays for `create_api_key`'s callers; a key made by
        # hand starts with the least a caller usually needs, and is widened on purpose.
        return {"scope": ApiKeyScope.AGENT, **super().get_changeform_initial_data(request)}

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple:
        fields = super().get_readonly_fields(request, obj)
        if obj is not None and obj.revoked:
            fields = (*fields, "scope")
        return tuple(_SHOWN_AS.get(name, name) for name in fields)

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        readonly = self.get_readonly_fields(request, obj)
        fields = [
            _SHOWN_AS.get(name, name) if _SHOWN_AS.get(name, name) in readonly else name
            for name in ("prefix", *ApiKeyForm.Meta.fields)
        ]
        # A key gets its prefix when it is saved: the add form has none to show.
        return fields if obj is not None else fields[1:]

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            obj.save()
            return
        # Not the package's message: a message waits in the session (a row of
        # django_session) until a page reads it. The key goes to the add's own answer.
        obj.key_shown_once = ApiKey.objects.assign_key(obj)
        obj.save()

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        # Whichever button saved it, the new key's page answers the POST (no redirect);
        # the secret leaves the instance with it.
        return new_key_page(self, request, obj, obj.__dict__.pop("key_shown_once"))

    @admin.display(description=_("prefix"), ordering="prefix")
    def key_prefix(self, obj: ApiKey) -> str:
        return obj.prefix

    @admin.display(description=_("name"), ordering="name")
    def key_name(self, obj: ApiKey) -> str:
        return obj.name

    # As every list writes a time (diagnosis/admin_times.py).
    @admin.display(description=_("created"), ordering="created")
    def key_created(self, obj: ApiKey) -> SafeString | None:
        return list_time(obj.created)

    @admin.display(
        description=ApiKey._meta.get_field("expiry_date").verbose_name, ordering="expiry_date"
    )
    def key_expiry(self, obj: ApiKey) -> SafeString | None:
        return list_time(obj.expiry_date)

    # Icons named in the page's language (config/admin_icons.py), not boolean=True.
    @admin.display(description=_("expired"))
    def key_has_expired(self, obj: ApiKey) -> SafeString:
        return yes_no_icon(obj.has_expired)

    @admin.display(description=_("revoked"), ordering="revoked")
    def key_revoked(self, obj: ApiKey) -> SafeString:
        return yes_no_icon(obj.revoked)


# --- Pieces shared by the session and bad-case admins ----------------------------------


def score_badge(score: int | None, *, status: str | None = None) -> SafeString:
    """The evidence score as a number on the color of its band.

    Without a score, a running or succeeded session is waiting for its score; a failed
    one is not scored automatically at all, so it is not shown as waiting.
    """
    if score is None and status == SessionStatus.FAILED:
        return format_html('<span class="score score-unscored">{}</span>', _("not scored (failed)"))
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
        # Capitalised as the other filters' choices are ("Pending", "Today").
        return [(band, capfirst(label)) for band, label in ScoreBand.choices]

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


class SessionAdminBase(
    ModelPagesMixin, OfferedLookupsMixin, EstimatedCountAdminMixin, admin.ModelAdmin
):
    """Sessions seen by operators: read-only, scored, fast on a million rows. Their
    pages link to a case or a session only where it opens to the operator
    (config.admin_site.model_pages_of)."""

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
        if SESSION_ID_LOOKUP_PATTERN.fullmatch(term):
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
        return score_badge(obj.score, status=obj.status)

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
        badge = score_badge(obj.score, status=obj.status)
        if not source:
            return badge
        return format_html(
            '{} <small title="{}">{}</small>', badge, source, SCORE_SOURCES.get(source, source)
        )


# --- Tool catalog (OTLP ingest) --------------------------------------------------------


class ToolCatalogForm(forms.ModelForm):
    class Meta:
        model = ToolCatalogEntry
        fields = ["tool_name", "kind", "level_rule", "code_pattern", "text_is_one_document"]

    def clean_code_pattern(self) -> str:
        pattern = self.cleaned_data["code_pattern"]
        try:
            re.compile(pattern)
        except re.error as exc:
            raise forms.ValidationError(
                _("Not a regular expression: %(error)s"), params={"error": exc}
            ) from None
        return pattern


# The level rules in a few words, for the list's select (the filter beside the list and
# the tool's page give the whole sentences): a select cannot wrap, and the longest rule
# whole would push the list's last columns out of a 1366-pixel screen.
LEVEL_RULE_SHORT = {
    LevelRule.HITS: _("Docs > 0 -> L1, else NONE"),
    LevelRule.CODE: _("Code -> L0, docs > 0 -> L1, else NONE"),
    LevelRule.NONE: LevelRule.NONE.label,
}


class ToolCatalogListForm(forms.ModelForm):
    """A row of the tool catalog's list, its level rules said in a few words."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields.get("level_rule")
        if field is not None:
            field.choices = [(rule, LEVEL_RULE_SHORT[rule]) for rule in LevelRule]


@admin.register(ToolCatalogEntry)
class ToolCatalogAdmin(OfferedLookupsMixin, admin.ModelAdmin):
    """Every tool name seen in traces. Marking a tool as retrieval, and how its match
    level is read, applies to the spans received from then on."""

    form = ToolCatalogForm
    list_display = [
        "tool_name",
        "kind",
        "level_rule",
        "text_document_column",
        "code_pattern",
        "first_seen_column",
    ]
    list_editable = ["kind", "level_rule"]
    list_filter = ["kind", "level_rule", "text_is_one_document"]
    search_fields = ["^tool_name"]
    ordering = ["tool_name"]

    class Media:
        css = {"all": ["diagnosis/admin.css"]}

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> type[forms.ModelForm]:
        return super().get_changelist_form(request, form=ToolCatalogListForm, **kwargs)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        # Django names the action by the list's plural, "tool catalog": it deletes tools.
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            func, name, _description = actions["delete_selected"]
            actions["delete_selected"] = (func, name, _("Delete selected tools"))
        return actions

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        if request.method == "GET" and not tool_catalog_room():
            message = _(
                "The tool catalog is full (%(bound)s tool names, TOOL_CATALOG_MAX_NAMES): "
                "tool names new to it are not added from traces. Their calls are still "
                "stored and scored; delete names no agent uses any more to make room."
            )
            bound = settings.TOOL_CATALOG_MAX_NAMES
            self.message_user(request, message % {"bound": bound}, messages.WARNING)
        return super().changelist_view(request, extra_context)

    # Said in a few words, as the level rules are (the tool's page has the whole
    # sentence and sets it): the list keeps each column in view at 1366 pixels.
    @admin.display(description=_("Text = 1 doc"), boolean=True, ordering="text_is_one_document")
    def text_document_column(self, obj: ToolCatalogEntry) -> bool:
        return obj.text_is_one_document

    # As every list writes a time (diagnosis/admin_times.py).
    first_seen_column = list_time_column("first_seen", _("first seen"))


# The tool invocations a page at a time, and django-q2's lists in the console's style
# (registered on import).
from diagnosis import admin_invocations, task_queue_admin  # noqa: E402, F401
