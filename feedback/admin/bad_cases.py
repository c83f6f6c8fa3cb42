"""The bad-case work queue: sessions users found not useful, and their review."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import CHANGE
from django.contrib.admin.views.main import ORDER_VAR, ChangeList
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from config.admin_history import changed_fields, log_keyed_entries
from config.admin_paginator import IndexOrderChangeList
from config.admin_site import model_pages_of
from diagnosis.admin import (
    EvidenceScoreBandFilter,
    SessionAdminBase,
    SessionChangeList,
    score_badge,
    session_change_url,
)
from diagnosis.admin_times import list_time, list_time_column, long_time
from diagnosis.models import DiagnosisSession
from feedback.admin.corrections import ReaderFeedbackMixin
from feedback.admin.evidence import EvidenceTablesMixin
from feedback.admin.invocations import session_invocations_table
from feedback.admin.queues import (
    AssigneeFilter,
    ReviewQueueMixin,
    TagFilter,
)
from feedback.admin.reader_history import ReaderHistoryMixin
from feedback.admin.review_form import BadCaseReviewForm, review_of
from feedback.models import BadCase, BadCaseReview, ReviewState
from feedback.selectors import (
    CONFIDENT_MIN_SCORE,
    OPEN_REVIEW_STATES,
    REVIEW_STATE,
    sessions_confident_but_wrong,
)
from feedback.services import bad_case_review_update, bad_cases_mark


class ReviewStateFilter(admin.SimpleListFilter):
    title = _("review state")
    parameter_name = "review_state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("open", capfirst(_("open (new or triaged)"))), *ReviewState.choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "open":
            return queryset.filter(review_state__in=OPEN_REVIEW_STATES)
        if value == ReviewState.NEW:
            return queryset.filter(review_state=value)  # with or without a review row
        if value in ReviewState.values:
            # An inner join on the review's state: the database starts from the reviews
            # in that state (index state, reviewed_at) instead of reading every bad case.
            return queryset.filter(review__state=value)
        return queryset


class DisagreementFilter(admin.SimpleListFilter):
    """Open bad cases with a high score: the tools found the evidence and the answer
    still failed. Review these first (the bad-case list links here above its rows); a
    resolved one is worked, and is found under the score band filter. The export of the
    list applies this filter too."""

    title = _("disagreement")
    parameter_name = "disagreement"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("confident", _("Confident but wrong (score ≥ 65)"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "confident":
            return sessions_confident_but_wrong(queryset).filter(
                review_state__in=OPEN_REVIEW_STATES
            )
        return queryset


class BadCaseChangeList(IndexOrderChangeList, SessionChangeList):
    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet:
        queryset = super().get_queryset(request, exclude_parameters)
        reviewed = request.GET.get(ReviewStateFilter.parameter_name)
        if reviewed in (ReviewState.TRIAGED, ReviewState.RESOLVED) and ORDER_VAR not in request.GET:
            # Triaged or resolved cases come latest review first, in the order of the
            # review index: a page is read off the index instead of sorting every
            # review in that state by the session's creation time.
            return queryset.order_by("-review__reviewed_at", "-review__session_id")
        return queryset


@admin.register(BadCase)
class BadCaseAdmin(
    ReviewQueueMixin,
    ReaderHistoryMixin,
    ReaderFeedbackMixin,
    EvidenceTablesMixin,
    SessionAdminBase,
):
    """The work queue of sessions users found not useful."""

    form = BadCaseReviewForm
    list_display = (
        "session_id",
        "query_excerpt",
        "score_column",
        "review_state_column",
        "reviewed",
        "feedback_at_column",
        "created_at_column",
        # No "session_link" here: it repeated the id of the first column, which opens
        # the bad case; the bad case's page links to the session.
        "assignee_column",
        "tags_column",
    )
    # Sorted by feedback time, ties go by key alone: a page is read off the sessions'
    # (feedback, feedback_at) index in either direction.
    ties_by_key = ("feedback_at_column",)
    list_filter = (
        AssigneeFilter,
        TagFilter,
        DisagreementFilter,
        ReviewStateFilter,
        EvidenceScoreBandFilter,
        ("created_at", admin.DateFieldListFilter),
    )
    list_select_related = ("review", "review__assignee")
    change_list_template = "admin/feedback/badcase/change_list.html"
    fieldsets = (
        (
            _("Review"),
            {
                "fields": (
                    "review_state",
                    "review_note",
                    "review_assignee",
                    "review_tags",
                    "last_review",
                )
            },
        ),
        (
            _("Session"),
            {
                "fields": (
                    "session_link",
                    "user_id",
                    "status",
                    "created_at",
                    "finished_at",
                    "feedback_at",
                )
            },
        ),
        (_("Question and answer"), {"fields": ("query_text", "answer_text")}),
        (_("What readers said"), {"fields": ("feedback_history",)}),
        (
            _("Evidence"),
            {"fields": ("score_detail", "factors_table", "opinion_table", "invocations_table")},
        ),
    )
    readonly_fields = (
        "last_review",
        "session_link",
        "user_id",
        "status",
        "created_at",
        "finished_at",
        "feedback_at",
        "query_text",
        "answer_text",
        "score_detail",
        "factors_table",
        "opinion_table",
        "invocations_table",
        "feedback_history",
    )
    actions = (
        "mark_triaged",
        "mark_resolved",
        "assign_to_me",
        "assign_to_chosen",
        "unassign",
        "add_tag",
        "create_case_from_correction",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(review_state=REVIEW_STATE)
            .select_related("review", "review__assignee")
            .prefetch_related("review__tags")
        )

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return BadCaseChangeList

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        # The queue to work first, above the rows: open bad cases the tools backed well.
        extra_context = {
            **(extra_context or {}),
            "confident_queue_url": "?"
            + urlencode({"disagreement": "confident", "review_state": "open"}),
            "confident_min_score": CONFIDENT_MIN_SCORE,
            "unbacked_url": reverse("admin:feedback_usefulwithoutevidence_changelist"),
        }
        return super().changelist_view(request, extra_context)

    @admin.display(description=_("evidence score"))
    def score_column(self, obj: BadCase) -> SafeString:
        badge = score_badge(obj.score, status=obj.status)
        # The queue to work first: open bad cases only (a resolved one is worked).
        if (
            obj.review_state in OPEN_REVIEW_STATES
            and obj.score is not None
            and obj.score >= CONFIDENT_MIN_SCORE
        ):
            return format_html(
                '{} <span class="confident-but-wrong">{}</span>', badge, _("confident but wrong")
            )
        return badge

    def save_model(
        self, request: HttpRequest, obj: BadCase, form: forms.Form, change: bool
    ) -> None:
        # Only the review is written, and only what this page changed (changed_data:
        # BadCaseReviewForm); the session row is untouched.
        changed = {name.removeprefix("review_") for name in form.changed_data}
        bad_case_review_update(
            session_id=obj.session_id,
            changed={name: form.cleaned_data[f"review_{name}"] for name in changed},
            reviewer=request.user.get_username(),
        )

    # --- columns

    # In the list these are cut short when long (admin.css), each whole in its tooltip.
    @admin.display(description=_("question"))
    def query_excerpt(self, obj: BadCase) -> SafeString:
        excerpt = super().query_excerpt(obj)
        return format_html('<span class="question-excerpt" title="{}">{}</span>', excerpt, excerpt)

    # The times as every list writes them (diagnosis/admin_times.py).
    feedback_at_column = list_time_column("feedback_at", _("feedback at"))
    created_at_column = list_time_column("created_at", _("created at"))

    @admin.display(description=_("assignee"), ordering="review__assignee__username")
    def assignee_column(self, obj: BadCase) -> SafeString:
        name = super().assignee_column(obj)
        return format_html('<span class="user-name" title="{}">{}</span>', name, name)

    @admin.display(description=_("review state"))
    def review_state_column(self, obj: BadCase) -> SafeString:
        return format_html(
            '<span class="review-state review-{}">{}</span>',
            obj.review_state,
            ReviewState(obj.review_state).label,
        )

    @admin.display(description=_("session"))
    def session_link(self, obj: BadCase) -> SafeString:
        # The session's page asks for the sessions' own permission, not the bad cases'.
        return model_pages_of(obj).link(
            DiagnosisSession, session_change_url(obj.pk), obj.session_id
        )

    # --- detail

    # Those who may only view get these instead of the form's two fields (a read-only
    # page looks each name up on the admin).
    @admin.display(description=_("review state"))
    def review_state(self, obj: BadCase) -> str:
        return ReviewState(obj.review_state).label

    @admin.display(description=_("reviewer note"))
    def review_note(self, obj: BadCase) -> str:
        review = review_of(obj)
        return review.note if review else ""

    @admin.display(description=_("last review"), ordering="review__reviewed_at")
    def reviewed(self, obj: BadCase) -> SafeString:
        return self._last_review(obj, in_list=True)

    @admin.display(description=_("last review"))
    def last_review(self, obj: BadCase) -> SafeString:
        return self._last_review(obj, in_list=False)

    @staticmethod
    def _last_review(obj: BadCase, *, in_list: bool) -> SafeString:
        review = review_of(obj)
        if review is None or not review.reviewed_at:
            said = _("not reviewed yet")
            return format_html('<span class="last-review" title="{}">{}</span>', said, said)
        who = review.reviewed_by or "-"
        said = gettext("{who}, {when}")
        whole = said.format(who=who, when=long_time(review.reviewed_at))
        if not in_list:
            return format_html('<span class="last-review" title="{}">{}</span>', whole, whole)
        # In the list, the name on one line, cut short when longer than its column (a
        # hyphenated one broke over six lines), above the day and the time: three lines.
        return format_html(
            '<span class="last-review" title="{}">{}</span>',
            whole,
            format_html(
                said,
                who=format_html('<span class="user-name">{}</span>', who),
                when=list_time(review.reviewed_at),
            ),
        )

    @admin.display(description=_("tool invocations"))
    def invocations_table(self, obj: BadCase) -> SafeString:
        # A table rather than an inline formset: this page is a form that is posted, and
        # a few hundred inline rows would be a few hundred posted fields for nothing.
        # The calls' pages ask for the sessions' permission, not the bad cases'.
        return session_invocations_table(
            session_id=obj.session_id, linked=model_pages_of(obj).open(DiagnosisSession)
        )

    # --- actions

    @admin.action(description=_("Mark the selected bad cases triaged"), permissions=["change"])
    def mark_triaged(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._mark(request, queryset, ReviewState.TRIAGED)

    @admin.action(description=_("Mark the selected bad cases resolved"), permissions=["change"])
    def mark_resolved(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._mark(request, queryset, ReviewState.RESOLVED)

    def _mark(self, request: HttpRequest, queryset: QuerySet, state: str) -> None:
        # Their keys, not instances: on "select all" these are every bad case the
        # filters match, tens of thousands; the history names each by its session id.
        changed = list(
            queryset.exclude(review_state=state)
            .select_related(None)
            .prefetch_related(None)
            .order_by()
            .values_list("pk", "session_id")
        )
        count = bad_cases_mark(
            session_ids=[session_id for _, session_id in changed],
            state=state,
            reviewer=request.user.get_username(),
        )
        if changed:
            # Named as the review form names it, shown in the reader's language.
            log_keyed_entries(
                request.user.pk, BadCase, changed, CHANGE, changed_fields(BadCaseReview, "state")
            )
        self.message_user(
            request,
            ngettext(
                "%(count)d bad case marked %(state)s.",
                "%(count)d bad cases marked %(state)s.",
                count,
            )
            % {"count": count, "state": ReviewState(state).label},
            messages.SUCCESS,
        )
