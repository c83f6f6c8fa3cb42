"""The case forms: the page's, the list's editable columns', and the bulk action's."""

from typing import Any

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.utils.translation import gettext_lazy as _


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
        # An automatic case holds the whole answer as both its root cause and its
        # solution: the page shows that text once. The solution stays empty, meaning
        # "the same text", until the operator writes one of its own.
        self.solution_is_root_cause = bool(
            not self.instance._state.adding
            and "solution" in self.fields
            and self.instance.solution.strip() == self.instance.root_cause.strip()
        )
        if self.solution_is_root_cause:
            self.fields["root_cause"].label = _("root cause and solution")
            self.fields["solution"].required = False
            self.fields["solution"].help_text = _(
                "The same text as the root cause. Leave it empty to keep it so, or write a "
                "solution of its own."
            )
            self.initial["solution"] = ""

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
