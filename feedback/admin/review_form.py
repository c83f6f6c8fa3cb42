"""The review form on a bad case's page: state, note, assignee and tags."""

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from feedback.models import BadCase, BadCaseReview, ReviewState, ReviewTag
from feedback.review_queues import bad_case_assignees


def review_of(session: Any) -> BadCaseReview | None:
    try:
        return session.review
    except ObjectDoesNotExist:
        return None


def _lf(value: Any) -> Any:
    return value.replace("\r\n", "\n") if isinstance(value, str) else value


def _user_key(value: Any) -> Any:
    """A posted user key as the user table's key, or None when it is none."""
    try:
        return get_user_model()._meta.pk.to_python(value)
    except ValidationError:
        return None


class ReviewNoteField(forms.CharField):
    """A textarea posts its line breaks as CRLF, while the page's hidden copy of the note
    comes back with LF (an HTML parser reads line breaks in an attribute so): the same
    note either way, not a change."""

    def has_changed(self, initial: Any, data: Any) -> bool:
        return super().has_changed(_lf(initial), _lf(data))


# The labels are capitalised as Django capitalises a model field's verbose name (these
# fields are the form's own, not the model's).
class BadCaseReviewForm(forms.ModelForm):
    """The review of a bad case; the session it is about stays read-only.

    The page carries hidden copies of the values it showed (`show_hidden_initial`), and
    `changed_data` compares with them rather than with the review as it is at the save:
    what a colleague saved since the page was opened is not taken for this page's
    change, and save_model writes only this page's changes.
    """

    review_state = forms.ChoiceField(
        label=capfirst(_("review state")), choices=ReviewState.choices, show_hidden_initial=True
    )
    review_note = ReviewNoteField(
        label=capfirst(_("reviewer note")),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        show_hidden_initial=True,
    )
    review_assignee = forms.ModelChoiceField(
        label=capfirst(_("assignee")),
        queryset=bad_case_assignees(),
        required=False,
        show_hidden_initial=True,
    )
    review_tags = forms.ModelMultipleChoiceField(
        label=capfirst(_("tags")),
        queryset=ReviewTag.objects.all(),
        required=False,
        show_hidden_initial=True,
    )

    class Meta:
        model = BadCase
        fields = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The state's copy is always posted from the page (a select always has a value;
        # an empty list of tags posts nothing). Without it the post did not come from the
        # page: it is compared with the review as it is now, as Django does by default.
        if self.is_bound and self["review_state"].html_initial_name not in self.data:
            for field in self.fields.values():
                field.show_hidden_initial = False
        review = review_of(self.instance)
        self.fields["review_state"].initial = review.state if review else ReviewState.NEW
        self.fields["review_note"].initial = review.note if review else ""
        self.fields["review_assignee"].initial = review.assignee_id if review else None
        self.fields["review_tags"].initial = list(review.tags.all()) if review else []
        self.fields["review_assignee"].queryset = bad_case_assignees(keep=self._assignees_shown())

    def _assignees_shown(self) -> list[Any]:
        """Assignees kept on offer though they may no longer work the queue: the bad
        case's own, and the one the page showed (a colleague may have changed it since),
        so that a save leaving the assignee alone is not refused for it. A post cannot
        give a bad case to one of them: the page's own is no change, and the bad case's
        own is the assignee it has."""
        shown = [self.fields["review_assignee"].initial]
        field = self["review_assignee"]
        if self.is_bound and field.field.show_hidden_initial:
            shown.append(self.data.get(field.html_initial_name))
        return [key for key in map(_user_key, shown) if key is not None]
