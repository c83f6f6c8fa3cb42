"""The case library's admin: a fast list to curate from, and the case page."""

from functools import partial
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import CHANGE
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ValidationError
from django.db import router, transaction
from django.db.models import F, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from caselibrary import structuring
from caselibrary.admin.columns import CaseColumnsMixin
from caselibrary.admin.duplicates import NearDuplicatesMixin
from caselibrary.admin.filters import (
    FaultCategoryFilter,
    ReuseFilter,
    SessionNowNotUsefulFilter,
    StillGeneralFilter,
    category_choices,
    category_field,
)
from caselibrary.admin.forms import (
    SESSION_CANNOT_BECOME_CASE,
    SESSION_NOT_FOUND,
    CaseActionForm,
    CaseForm,
    CaseRowForm,
    CaseRowFormSet,
)
from caselibrary.admin.imports import CaseImportMixin
from caselibrary.models import GENERAL_CATEGORY, SYSTEM_USER, CaseLibrary
from caselibrary.selectors import (
    case_draft_from_session,
    case_merged_into,
    fault_category_taxonomy,
)
from caselibrary.services.cases import (
    EDITABLE_FIELDS,
    case_create_manual,
    case_update,
    cases_delete,
    cases_set_category,
    session_can_become_case,
)
from config.admin_history import changed_fields, log_keyed_entries
from config.admin_lookups import OfferedLookupsMixin
from config.admin_paginator import EstimatedCountAdminMixin, IndexOrderChangeList
from config.admin_site import ModelPagesMixin, model_pages
from diagnosis.admin import session_change_url
from diagnosis.exceptions import SessionNotFound
from diagnosis.models import DiagnosisSession
from diagnosis.selectors import session_get

BULK_BATCH = 1000


@admin.register(CaseLibrary)
class CaseLibraryAdmin(
    ModelPagesMixin,
    NearDuplicatesMixin,
    CaseImportMixin,
    CaseColumnsMixin,
    OfferedLookupsMixin,
    EstimatedCountAdminMixin,
    admin.ModelAdmin,
):
    form = CaseForm
    action_form = CaseActionForm
    list_per_page = 50
    # Fits a 1366-pixel screen beside the navigation and the filters: the source, its
    # session and the last change share one column, the reuse figures another.
    list_display = ("title", "fault_category", "error_code", "source_column", "reuse_column")
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
    search_help_text = _(
        "Words from the title, the start of an error code, or a case id or its session id."
    )
    ordering = ("-created_at",)
    raw_id_fields = ("diagnosis",)
    actions = ("set_category",)

    class Media:
        css = {"all": ["diagnosis/admin.css"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The session's primary key (for the link) and its feedback ride along on one
        # LEFT JOIN over the unique session_id, instead of a query per row.
        # Its reuse figures come the same way, over the case_reuse primary key, and the
        # case it was merged into by the case_merge primary key.
        return (
            super()
            .get_queryset(request)
            .annotate(
                merged_into=case_merged_into(),
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

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return IndexOrderChangeList

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
        # Read-only, a text that is both root cause and solution is shown once; an editor
        # gets both fields, the solution empty while it is the same text (CaseForm).
        shared = obj.solution.strip() == obj.root_cause.strip()
        editor = self.has_change_permission(request, obj)
        text = ["root_cause"] if shared and not editor else ["root_cause", "solution"]
        return [
            "session_column",
            "source_type",
            "title",
            "fault_category",
            "error_code",
            *text,
            "created_by",
            "created_at",
            "updated_by",
            "updated_at",
            "hits_column",
            "useful_rate_column",
            "last_hit_column",
            "near_duplicates_column",
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
            "near_duplicates_column",
        )

    def formfield_for_dbfield(
        self, db_field: Any, request: HttpRequest, *, in_list: bool = False, **kwargs: Any
    ) -> Any:
        if db_field.name == "fault_category":
            return category_field(request, capfirst(db_field.verbose_name), in_list=in_list)
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "diagnosis" and not model_pages(request).open(DiagnosisSession):
            # The session's id typed in, without the raw-id box's links to the sessions'
            # list and the session's page, which do not open to this operator.
            kwargs.setdefault("widget", forms.TextInput(attrs={"class": "vTextField"}))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        if request.method == "POST" and "_save" in request.POST:
            # The edited rows are checked against what the list showed and saved in one
            # transaction, each changed row locked from its check to its save (CaseForm).
            with transaction.atomic(using=router.db_for_write(self.model)):
                return self._changelist_view(request, extra_context)
        return self._changelist_view(request, extra_context)

    def _changelist_view(self, request: HttpRequest, extra_context: Any) -> Any:
        response = super().changelist_view(request, extra_context)
        action_form = getattr(response, "context_data", {}).get("action_form")
        if action_form is not None:
            action_form.fields["fault_category"].widget.choices = [
                ("", "---------"),
                *category_choices(request),
            ]
        return response

    def get_changelist_form(self, request: HttpRequest, **kwargs: Any) -> type[forms.ModelForm]:
        return super().get_changelist_form(request, form=CaseRowForm, **kwargs)

    def get_changelist_formset(self, request: HttpRequest, **kwargs: Any) -> type:
        # Its rows name each category (the formset makes their fields with this callback).
        callback = partial(self.formfield_for_dbfield, request=request, in_list=True)
        return super().get_changelist_formset(
            request, formfield_callback=callback, formset=CaseRowFormSet, **kwargs
        )

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if term and not any(ch.isspace() for ch in term):
            # A case id, or the id of its session, as the API gives them, finds the case.
            # Case ids are stored in lower case; a page may show them upper-cased.
            results |= queryset.filter(Q(case_id=term.lower()) | Q(diagnosis_id=term))
        return results, may_have_duplicates

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        session_id = request.GET.get("from_session")
        if request.method == "GET" and session_id:
            refusal = self._refuse_source_session(request, session_id)
            if refusal is not None:
                return refusal
        return super().add_view(request, form_url, extra_context)

    def _refuse_source_session(
        self, request: HttpRequest, session_id: str
    ) -> HttpResponseRedirect | None:
        """Why a case cannot be made from the session, said where the operator can see
        it, rather than a prefilled form that saving would refuse; None if it can."""
        try:
            session = session_get(session_id=session_id)
        except SessionNotFound:
            self.message_user(request, SESSION_NOT_FOUND % {"value": session_id}, messages.ERROR)
            return HttpResponseRedirect(reverse("admin:diagnosis_diagnosissession_changelist"))
        if session.linked_case_id is not None:
            # As the sessions' action does: one case per session, and here it is.
            self.message_user(
                request,
                _("Session %(session)s already has a case: here it is.") % {"session": session_id},
                messages.INFO,
            )
            return HttpResponseRedirect(
                reverse("admin:caselibrary_caselibrary_change", args=[session.linked_case_id])
            )
        if not session_can_become_case(session=session):
            self.message_user(
                request, SESSION_CANNOT_BECOME_CASE % {"session": session_id}, messages.WARNING
            )
            return HttpResponseRedirect(session_change_url(session.pk))
        return None

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        # A new case is GENERAL until curated, as every automatic case starts; made from
        # a session, it starts with what the structuring proposes for that text.
        initial = {"fault_category": GENERAL_CATEGORY}
        initial.update(super().get_changeform_initial_data(request))
        session_id = request.GET.get("from_session")
        draft = case_draft_from_session(session_id=session_id) if session_id else None
        if draft:
            initial.update(draft)
            proposal = structuring.propose(
                query=draft["title"],
                answer=f"{draft['root_cause']}\n{draft['solution']}",  # sections or all
                taxonomy=fault_category_taxonomy(),
                default_category=GENERAL_CATEGORY,
            )
            initial["fault_category"] = proposal.fault_category
            if proposal.error_code:
                initial.setdefault("error_code", proposal.error_code)
        return initial

    def save_model(self, request: HttpRequest, obj: CaseLibrary, form: Any, change: bool) -> None:
        operator = request.user.get_username()
        data = form.cleaned_data
        if change:
            # Only what this page changed (CaseForm): a colleague's save since stays.
            changes = form.changes(EDITABLE_FIELDS)
            for name, value in form.untouched(changes).items():
                setattr(obj, name, value)
            if changes or obj.updated_by == SYSTEM_USER:  # unchanged: confirms the proposal
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

    @admin.action(description=_("Set the category of the selected cases"), permissions=["change"])
    def set_category(self, request: HttpRequest, queryset: QuerySet) -> None:
        code = request.POST.get("fault_category", "")
        if not code:
            self.message_user(
                request, _("Choose a category next to the action first."), messages.WARNING
            )
            return
        # Each case's key and title (its name in the history), read once, as tuples: on
        # "select all" these are every case the filters match, tens of thousands.
        cases = list(queryset.order_by().values_list("pk", "title"))
        operator = request.user.get_username()
        message = changed_fields(CaseLibrary, "fault_category")
        changed = 0
        try:
            for start in range(0, len(cases), BULK_BATCH):
                batch = cases[start : start + BULK_BATCH]
                changed += cases_set_category(
                    case_ids=[pk for pk, _ in batch], fault_category=code, updated_by=operator
                )
                log_keyed_entries(request.user.pk, CaseLibrary, batch, CHANGE, message)
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
