"""The case forms: the page's, the list's editable columns', and the bulk action's."""

from typing import Any

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError
from django.utils.functional import cached_property
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from caselibrary.services.cases import session_can_become_case
from diagnosis.models import DiagnosisSession

# The sessions' "create a case" action gives the same reason, in the same words.
SESSION_CANNOT_BECOME_CASE = _(
    "Session %(session)s has no answer to make a case of: only finished "
    "sessions with an answer become cases."
)
# The API's words for a session id that names none; "value" is what Django's
# invalid-choice error fills in.
SESSION_NOT_FOUND = _('Session "%(value)s" does not exist.')


class CaseActionForm(ActionForm):
    # The options are the request's taxonomy (set in changelist_view); the service
    # checks the posted code. Capitalised as "Action:" beside it is.
    fault_category = forms.CharField(
        label=capfirst(_("category")), required=False, widget=forms.Select
    )


class CaseTextField(forms.CharField):
    """A case's text with the line endings every other path stores: browsers post a
    textarea's lines ending in \r\n."""

    def to_python(self, value: Any) -> str | None:
        text = super().to_python(value)
        return text.replace("\r\n", "\n").replace("\r", "\n") if text else text


class CaseForm(forms.ModelForm):
    class Meta:
        # Also in the change form's "has it changed?": the same text posted back with
        # \r\n is not an edit.
        field_classes = {
            "title": CaseTextField,
            "root_cause": CaseTextField,
            "solution": CaseTextField,
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        session_field = self.fields.get("diagnosis")
        if session_field is not None:
            # Django's "not one of the available choices" reads oddly for a typed id.
            session_field.error_messages["invalid_choice"] = SESSION_NOT_FOUND
        field = self.fields.get("fault_category")
        current = self.instance.fault_category
        if field is not None and current not in dict(field.choices):
            # A code from before the taxonomy (or one since removed) is shown as it is,
            # so that saving something else does not silently change it.
            field.choices = [*field.choices, (current, current)]
        # An automatic case holds the whole answer as both its root cause and its
        # solution: the page shows that text once. The solution stays empty, meaning
        # "the same text", until the operator writes one of its own.
        self.solution_is_root_cause = bool(
            not self.instance._state.adding
            and "solution" in self.fields
            and self.instance.solution.strip() == self.instance.root_cause.strip()
        )
        if self.solution_is_root_cause:
            self.fields["root_cause"].label = _("Root cause and solution")
            self.fields["solution"].required = False
            self.fields["solution"].help_text = _(
                "The same text as the root cause. Leave it empty to keep it so, or write a "
                "solution of its own."
            )
            self.initial["solution"] = ""

    def clean_diagnosis(self) -> DiagnosisSession | None:
        session = self.cleaned_data.get("diagnosis")
        if session is not None and not session_can_become_case(session=session):
            raise ValidationError(
                SESSION_CANNOT_BECOME_CASE,
                code="cannot_become_case",
                params={"session": session.session_id},
            )
        return session

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.solution_is_root_cause and not data.get("solution"):
            data["solution"] = data.get("root_cause", self.instance.root_cause)
        return data

    def changes(self, names: Any) -> dict[str, Any]:
        """The edited fields among `names`, with the solution kept equal to the root cause
        while it is shown as one text."""
        changed = {name: self.cleaned_data[name] for name in self.changed_data if name in names}
        if self.solution_is_root_cause and "root_cause" in changed and "solution" not in changed:
            changed["solution"] = changed["root_cause"]
        return changed

    @cached_property
    def changed_data(self) -> list[str]:
        # The stored text posted back, which the form trims, is no change: an answer kept
        # as sent (opening with an indented block, say) is not rewritten, nor logged as
        # changed, by a save that changes nothing.
        return [name for name in super().changed_data if not self._only_trimmed(name)]

    def _only_trimmed(self, name: str) -> bool:
        stored = self.initial.get(name)
        cleaned = getattr(self, "cleaned_data", {}).get(name)
        if not isinstance(stored, str) or cleaned is None or self.instance._state.adding:
            return False
        return cleaned == stored.replace("\r\n", "\n").strip()
