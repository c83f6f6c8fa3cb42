"""The bad-case review queues in the admin: assignee and tags, "my queue", "unassigned",
per-tag filters and bulk assignment (services in feedback/review_queues.py)."""

from collections.abc import Collection
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.models import CHANGE
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from config.admin_history import changed_fields, log_keyed_entries
from config.admin_lookups import OfferedLookupsMixin
from feedback.models import BadCase, BadCaseReview, ReviewTag
from feedback.review_queues import bad_case_assignees, bad_cases_assign, bad_cases_tag

# The action bar's inputs (QueueActionForm), each with the action that reads it.
ACTION_INPUTS = {"assignee": "assign_to_chosen", "tag": "add_tag"}


class AssigneeFilter(admin.SimpleListFilter):
    title = _("assignee")
    parameter_name = "assignee"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [("me", _("My queue")), ("none", _("Unassigned"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "me":
            return queryset.filter(review__assignee=request.user)
        if self.value() == "none":
            return queryset.filter(review__assignee__isnull=True)
        return queryset


class TagFilter(admin.SimpleListFilter):
    title = _("tag")
    parameter_name = "tag"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list:
        return [(tag.name, tag.name) for tag in ReviewTag.objects.all()[:100]]

    def value_is_known(self, value: str) -> bool:
        # Any tag, also one past the hundred the filter lists (config/admin_filter_values.py).
        return ReviewTag.objects.filter(name=value).exists()

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value():
            return queryset.filter(review__tags__name=self.value())
        return queryset


class QueueActionForm(ActionForm):
    """The action bar's extra inputs: whom to assign to, which tag to add.

    Plain text here, so that a bad value reaches the action, which says what is wrong
    (the admin would only say "no action selected"); the action cleans them with
    _strict_fields().
    """

    # Capitalised as "Action:" beside them is.
    assignee = forms.CharField(label=capfirst(_("assign to")), required=False, widget=forms.Select)
    tag = forms.CharField(label=capfirst(_("tag")), required=False, max_length=64)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignee"].widget.choices = [
            ("", "---------"),
            *((user.pk, user.get_username()) for user in bad_case_assignees()),
        ]


def _strict_fields() -> dict[str, forms.Field]:
    return {
        "assignee": forms.ModelChoiceField(queryset=bad_case_assignees()),
        "tag": forms.SlugField(max_length=64, allow_unicode=True),
    }


class ReviewQueueMixin:
    """For BadCaseAdmin: columns, filters and bulk actions of the queues."""

    action_form = QueueActionForm

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        response = super().changelist_view(request, extra_context)
        action_form = (getattr(response, "context_data", None) or {}).get("action_form")
        if action_form is not None:
            # An input shows only beside an action this user is offered that reads it:
            # a curator, offered cases from corrections alone, gets neither.
            offered = self.get_actions(request)
            for name, action in ACTION_INPUTS.items():
                if action not in offered:
                    del action_form.fields[name]
        return response

    @admin.display(description=_("assignee"), ordering="review__assignee__username")
    def assignee_column(self, obj: BadCase) -> str:
        review = _review(obj)
        return review.assignee.get_username() if review and review.assignee else "-"

    @admin.display(description=_("tags"))
    def tags_column(self, obj: BadCase) -> SafeString | str:
        review = _review(obj)
        tags = list(review.tags.all()) if review else []
        if not tags:
            return "-"
        return format_html_join(
            " ", '<span class="review-tag">{}</span>', ((t.name,) for t in tags)
        )

    # Read-only pages (viewers) look the form's field names up on the admin.
    @admin.display(description=_("assignee"))
    def review_assignee(self, obj: BadCase) -> str:
        return self.assignee_column(obj)

    @admin.display(description=_("tags"))
    def review_tags(self, obj: BadCase) -> SafeString | str:
        return self.tags_column(obj)

    @admin.action(description=_("Assign the selected bad cases to me"), permissions=["change"])
    def assign_to_me(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._assign(request, queryset, request.user)

    @admin.action(
        description=_("Assign the selected bad cases to the chosen user"), permissions=["change"]
    )
    def assign_to_chosen(self, request: HttpRequest, queryset: QuerySet) -> None:
        assignee = _chosen(request, "assignee")
        if assignee is None:
            self.message_user(request, _("Choose a staff user to assign to."), messages.WARNING)
            return
        self._assign(request, queryset, assignee)

    @admin.action(description=_("Unassign the selected bad cases"), permissions=["change"])
    def unassign(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._assign(request, queryset, None)

    @admin.action(description=_("Add the tag to the selected bad cases"), permissions=["change"])
    def add_tag(self, request: HttpRequest, queryset: QuerySet) -> None:
        tag = _chosen(request, "tag")
        if not tag:
            self.message_user(
                request,
                _("Type a tag (letters, digits, - and _) to add."),
                messages.WARNING,
            )
            return
        rows = selected_rows(queryset)
        tagged = bad_cases_tag(session_ids=[session_id for _, session_id in rows], tag=tag)
        log_review_change(request, rows, tagged, "tags")
        count = len(tagged)
        self.message_user(
            request,
            ngettext(
                "%(count)d bad case tagged %(tag)s.", "%(count)d bad cases tagged %(tag)s.", count
            )
            % {"count": count, "tag": tag},
            messages.SUCCESS,
        )

    def _assign(self, request: HttpRequest, queryset: QuerySet, assignee: Any) -> None:
        rows = selected_rows(queryset)
        moved = bad_cases_assign(
            session_ids=[session_id for _, session_id in rows], assignee=assignee
        )
        log_review_change(request, rows, moved, "assignee")
        count = len(moved)
        if assignee is None:
            # Not "assigned to nobody": a sentence of its own reads naturally in Chinese too.
            message = ngettext(
                "%(count)d bad case unassigned.", "%(count)d bad cases unassigned.", count
            ) % {"count": count}
        else:
            message = ngettext(
                "%(count)d bad case assigned to %(who)s.",
                "%(count)d bad cases assigned to %(who)s.",
                count,
            ) % {"count": count, "who": assignee.get_username()}
        self.message_user(request, message, messages.SUCCESS)


def _chosen(request: HttpRequest, name: str) -> Any:
    """One input of the action bar, cleaned by its field; None when missing or invalid.
    (The admin validated the form's `action` already, against choices only it knows.)"""
    try:
        return _strict_fields()[name].clean(request.POST.get(name))
    except ValidationError:
        return None


def selected_rows(queryset: QuerySet) -> list[tuple[int, str]]:
    """Every bad case an action was given, as (key, session id): the ticked ones, or with
    "select all" every one the list's filters match, however many pages (the services
    write them a batch at a time). Keys alone, no objects: the history names a bad case
    by its session id (what str() of one gives), the services take the ids."""
    return list(
        queryset.select_related(None)
        .prefetch_related(None)
        .order_by()
        .values_list("pk", "session_id")
    )


def log_review_change(
    request: HttpRequest, rows: list[tuple[int, str]], changed: Collection[str], field: str
) -> None:
    """The history of each bad case of `rows` (key, session id) whose `field` an action
    `changed` says so, and who did; the others' stays as it was."""
    ids = set(changed)
    rows = [row for row in rows if row[1] in ids]
    if not rows:
        return
    # Named as the review form names it, shown in the reader's language.
    message = changed_fields(BadCaseReview, field)
    log_keyed_entries(request.user.pk, BadCase, rows, CHANGE, message)


def _review(obj: BadCase) -> Any:
    try:
        return obj.review
    except ObjectDoesNotExist:
        return None


@admin.register(ReviewTag)
class ReviewTagAdmin(OfferedLookupsMixin, admin.ModelAdmin):
    list_display = ("name",)
    search_fields = ("name",)
