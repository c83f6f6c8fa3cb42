from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.models import CHANGE, LogEntry
from django.core.exceptions import ValidationError
from django.db.models import F, QuerySet
from django.http import HttpRequest
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import capfirst
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, override

from caselibrary.models import GENERAL_CATEGORY, CaseLibrary, CaseReuse, FaultCategory
from caselibrary.selectors import (
    case_draft_from_session,
    fault_category_choices,
    fault_category_in_use,
)
from caselibrary.services.cases import (
    EDITABLE_FIELDS,
    case_create_manual,
    case_update,
    cases_delete,
    cases_set_category,
)
from caselibrary.services.categories import fault_category_delete, fault_category_save
from config.admin_paginator import EstimatedCountAdminMixin
from diagnosis.admin import session_change_url
from diagnosis.models import Feedback

BULK_BATCH = 1000


def _category_choices(request: HttpRequest) -> list[tuple[str, str]]:
    # The filter, the list's editable column and the action all offer the taxonomy:
    # read it once per request, not once per row.
    if not hasattr(request, "_fault_category_choices"):
        request._fault_category_choices = fault_category_choices()
    return request._fault_category_choices


class FaultCategoryFilter(admin.SimpleListFilter):
    title = _("fault category")
    parameter_name = "fault_category"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return _category_choices(request)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(fault_category=self.value()) if self.value() else queryset


class StillGeneralFilter(admin.SimpleListFilter):
    title = _("still GENERAL")
    parameter_name = "still_general"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("yes", _("Yes: awaiting curation")), ("no", _("No: curated"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return queryset.filter(fault_category=GENERAL_CATEGORY)
        if self.value() == "no":
            return queryset.exclude(fault_category=GENERAL_CATEGORY)
        return queryset


class SessionNowNotUsefulFilter(admin.SimpleListFilter):
    """Cases made from a session whose user later changed their mind."""

    title = _("its session is now not useful")
    parameter_name = "session_not_useful"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("yes", _("Yes"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "yes":
            return queryset.filter(diagnosis__feedback=Feedback.NOT_USEFUL)
        return queryset


class ReuseFilter(admin.SimpleListFilter):
    """How cases fare once found: the stale ones (found often, rated not useful) first."""

    title = _("reuse")
    parameter_name = "reuse"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [
            ("stale", _("Stale: found often, rated not useful")),
            ("hit", _("Found at least once")),
            ("never", _("Never found")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "stale":
            return queryset.filter(reuse__stale=True)
        if self.value() == "hit":
            return queryset.filter(reuse__isnull=False)
        if self.value() == "never":
            return queryset.filter(reuse__isnull=True)
        return queryset


class CaseActionForm(ActionForm):
    # The options are the request's taxonomy (set in changelist_view); the service
    # checks the posted code.
    fault_category = forms.CharField(label=_("category"), required=False, widget=forms.Select)


class CaseForm(forms.ModelForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields.get("fault_category")
        current = self.instance.fault_category
        if field is not None and current not in dict(field.choices):
            # A code from before the taxonomy (or one since removed) is shown as it is,
            # so that saving something else does not silently change it.
            field.choices = [*field.choices, (current, current)]


@admin.register(CaseLibrary)
class CaseLibraryAdmin(EstimatedCountAdminMixin, admin.ModelAdmin):
    form = CaseForm
    action_form = CaseActionForm
    list_per_page = 50
    list_display = (
        "title",
        "fault_category",
        "error_code",
        "source_type",
        "session_column",
        "hits_column",
        "useful_rate_column",
        "last_hit_column",
        "updated_by",
        "updated_at",
    )
    list_display_links = ("title",)
    list_editable = ("fault_category", "error_code")
    list_filter = (
        FaultCategoryFilter,
        "source_type",
        StillGeneralFilter,
        SessionNowNotUsefulFilter,
        ReuseFilter,
    )
    search_fields = ("title", "^error_code")
    search_help_text = _("Words from the title, or the start of an error code.")
    ordering = ("-created_at",)
    raw_id_fields = ("diagnosis",)
    actions = ("set_category",)

    class Media:
        css = {"all": ["diagnosis/admin.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The session's primary key (for the link) and its feedback ride along on one
        # LEFT JOIN over the unique session_id, instead of a query per row.
        # Its reuse figures come the same way, over the case_reuse primary key.
        return (
            super()
            .get_queryset(request)
            .annotate(
                session_pk=F("diagnosis__id"),
                session_feedback=F("diagnosis__feedback"),
                l0_hits=F("reuse__l0_hits"),
                l1_hits=F("reuse__l1_hits"),
                last_hit_at=F("reuse__last_hit_at"),
                sessions_useful=F("reuse__sessions_useful"),
                sessions_not_useful=F("reuse__sessions_not_useful"),
                stale=F("reuse__stale"),
            )
        )

    def get_fields(self, request: HttpRequest, obj: CaseLibrary | None = None) -> list[str]:
        if obj is None:
            return [
                "diagnosis",
                "title",
                "fault_category",
                "error_code",
                "root_cause",
                "solution",
            ]
        return [
            "session_column",
            "source_type",
            "title",
            "fault_category",
            "error_code",
            "root_cause",
            "solution",
            "created_by",
            "created_at",
            "updated_by",
            "updated_at",
            "hits_column",
            "useful_rate_column",
            "last_hit_column",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: CaseLibrary | None = None) -> tuple:
        if obj is None:
            return ()
        return (
            "session_column",
            "source_type",
            "created_by",
            "created_at",
            "updated_by",
            "updated_at",
            "hits_column",
            "useful_rate_column",
            "last_hit_column",
        )

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "fault_category":
            return forms.ChoiceField(
                label=capfirst(db_field.verbose_name), choices=_category_choices(request)
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        response = super().changelist_view(request, extra_context)
        action_form = getattr(response, "context_data", {}).get("action_form")
        if action_form is not None:
            action_form.fields["fault_category"].widget.choices = [
                ("", "---------"),
                *_category_choices(request),
            ]
        return response

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> type[forms.ModelForm]:
        return super().get_changelist_form(request, form=CaseForm, **kwargs)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial = super().get_changeform_initial_data(request)
        session_id = request.GET.get("from_session")
        draft = case_draft_from_session(session_id=session_id) if session_id else None
        if draft:
            initial.update(draft)
        return initial

    def save_model(self, request: HttpRequest, obj: CaseLibrary, form: Any, change: bool) -> None:
        operator = request.user.get_username()
        data = form.cleaned_data
        if change:
            changes = {name: data[name] for name in form.changed_data if name in EDITABLE_FIELDS}
            if changes:
                case_update(case=obj, updated_by=operator, **changes)
            return
        session = data.get("diagnosis")
        case = case_create_manual(
            created_by=operator,
            title=data["title"],
            root_cause=data["root_cause"],
            solution=data["solution"],
            fault_category=data["fault_category"],
            error_code=data.get("error_code"),
            diagnosis_id=session.session_id if session else None,
        )
        # The admin logs and redirects to the object it handed us: make it the new case.
        obj.pk = case.pk
        obj.source_type = case.source_type
        obj.created_by = obj.updated_by = operator

    def delete_model(self, request: HttpRequest, obj: CaseLibrary) -> None:
        cases_delete(case_ids=[obj.pk])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        cases_delete(case_ids=list(queryset.values_list("pk", flat=True)))

    @admin.display(description=_("source session"), ordering="diagnosis_id")
    def session_column(self, obj: CaseLibrary) -> SafeString | str:
        if not obj.diagnosis_id:
            return "-"
        if getattr(obj, "session_pk", None) is None:
            return obj.diagnosis_id  # the session is gone; the case outlives it
        link = format_html(
            '<a href="{}">{}</a>', session_change_url(obj.session_pk), obj.diagnosis_id
        )
        if obj.session_feedback == Feedback.NOT_USEFUL:
            return format_html(
                '{} <span class="feedback-not_useful">{}</span>', link, _("now not useful")
            )
        return link

    @admin.display(description=_("hits"), ordering="reuse__l0_hits")
    def hits_column(self, obj: CaseLibrary) -> SafeString | str:
        l0, l1 = _reuse(obj, "l0_hits") or 0, _reuse(obj, "l1_hits") or 0
        if not l0 + l1:
            return "0"
        return format_html('<span title="L0 {} · L1 {}">{}</span>', l0, l1, l0 + l1)

    @admin.display(description=_("useful rate of the sessions that found it"))
    def useful_rate_column(self, obj: CaseLibrary) -> SafeString | str:
        useful = _reuse(obj, "sessions_useful") or 0
        rated = useful + (_reuse(obj, "sessions_not_useful") or 0)
        if not rated:
            return "–"
        text = f"{useful / rated:.0%} ({useful}/{rated})"
        if _reuse(obj, "stale"):
            return format_html('{} <span class="feedback-not_useful">{}</span>', text, _("stale"))
        return text

    @admin.display(description=_("last hit"), ordering="reuse__last_hit_at")
    def last_hit_column(self, obj: CaseLibrary) -> str:
        last = _reuse(obj, "last_hit_at")
        return date_format(localtime(last), "SHORT_DATETIME_FORMAT") if last else "–"

    @admin.action(description=_("Set the category of the selected cases"), permissions=["change"])
    def set_category(self, request: HttpRequest, queryset: QuerySet) -> None:
        code = request.POST.get("fault_category", "")
        if not code:
            self.message_user(
                request, _("Choose a category next to the action first."), messages.WARNING
            )
            return
        case_ids = list(queryset.values_list("pk", flat=True))
        operator = request.user.get_username()
        with override(None):
            fields = [str(CaseLibrary._meta.get_field("fault_category").verbose_name)]
        changed = 0
        try:
            for start in range(0, len(case_ids), BULK_BATCH):
                batch = case_ids[start : start + BULK_BATCH]
                changed += cases_set_category(
                    case_ids=batch, fault_category=code, updated_by=operator
                )
                LogEntry.objects.log_actions(
                    user_id=request.user.pk,
                    queryset=CaseLibrary.objects.filter(pk__in=batch).only("pk", "title"),
                    action_flag=CHANGE,
                    change_message=[{"changed": {"fields": fields}}],
                )
        except ValidationError as error:
            self.message_user(request, "; ".join(error.messages), messages.ERROR)
            return
        self.message_user(
            request,
            ngettext(
                "%(count)d case filed under %(category)s.",
                "%(count)d cases filed under %(category)s.",
                changed,
            )
            % {"count": changed, "category": code},
            messages.SUCCESS,
        )


def _reuse(obj: CaseLibrary, name: str) -> Any:
    """A reuse figure: annotated on the list, read from the reuse row on the detail page."""
    if hasattr(obj, name):
        return getattr(obj, name)
    try:
        return getattr(obj.reuse, name)
    except CaseReuse.DoesNotExist:
        return None


@admin.register(FaultCategory)
class FaultCategoryAdmin(admin.ModelAdmin):
    list_display = ("code", "name", "description", "keywords")
    search_fields = ("code", "name", "keywords")
    actions = None

    def get_readonly_fields(self, request: HttpRequest, obj: FaultCategory | None = None) -> tuple:
        # Cases refer to the code: it is fixed once made.
        return ("code",) if obj is not None else ()

    def has_delete_permission(self, request: HttpRequest, obj: FaultCategory | None = None) -> bool:
        if obj is not None and fault_category_in_use(code=obj.code):
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: FaultCategory, form: Any, change: bool) -> None:
        fault_category_save(
            code=obj.code, name=obj.name, description=obj.description, keywords=obj.keywords
        )

    def delete_model(self, request: HttpRequest, obj: FaultCategory) -> None:
        fault_category_delete(code=obj.code)
