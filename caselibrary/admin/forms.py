"""The case forms: the page's, the list's editable columns', and the bulk action's."""

import hashlib
from typing import Any

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError
from django.utils.functional import cached_property
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator, capfirst
from django.utils.translation import gettext_lazy as _

from caselibrary.error_codes import normalise_error_code
from caselibrary.services.cases import case_fields_for_update, session_can_become_case
from config.api import shows_words
from diagnosis.models import DiagnosisSession
from diagnosis.text import without_bidi_controls

# The sessions' "create a case" action gives the same reason, in the same words.
SESSION_CANNOT_BECOME_CASE = _(
    "Session %(session)s has no answer to make a case of: only finished "
    "sessions with an answer become cases."
)
# The API's words for a session id that names none; "value" is what Django's
# invalid-choice error fills in.
SESSION_NOT_FOUND = _('Session "%(value)s" does not exist.')
# A field both this page and a colleague changed since the page was opened.
CHANGED_BY_COLLEAGUE = _(
    "%(field)s was changed by a colleague since this page was opened: it is now "
    "“%(value)s”. Reload the page to see their change, then make yours again."
)
EMPTIED_BY_COLLEAGUE = _(
    "%(field)s was emptied by a colleague since this page was opened. Reload the page "
    "to see their change, then make yours again."
)
# How much of a colleague's text such an error quotes.
QUOTED_CHARS = 300


class CaseActionForm(ActionForm):
    # The options are the request's taxonomy (set in changelist_view); the service
    # checks the posted code. Capitalised as "Action:" beside it is.
    fault_category = forms.CharField(
        label=capfirst(_("category")), required=False, widget=forms.Select
    )


_DIGEST = "sha256:"


def _normal(text: Any) -> str:
    """A text as CaseTextField takes it in."""
    text = without_bidi_controls(str(text or "")).strip()
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _is_digest(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(_DIGEST) and len(value) == 71


def text_digest(text: Any) -> str:
    """What a page keeps of a text it showed, to tell later whether it changed: its
    digest (an empty text: empty)."""
    text = _normal(text)
    return _DIGEST + hashlib.sha256(text.encode()).hexdigest() if text else ""


class TextDigestInput(forms.HiddenInput):
    """The hidden copy of a text the page showed: its digest, not the text again (an
    answer can be long, and the page would carry it twice)."""

    def format_value(self, value: Any) -> str | None:
        # Shown again after an error, the copy the page was posted with is kept.
        return value if _is_digest(value) else text_digest(value)


class CaseTextField(forms.CharField):
    """A case's text with the line endings every other path stores (browsers post a
    textarea's lines ending in \r\n), without bidirectional controls (diagnosis.text)."""

    hidden_widget = TextDigestInput

    def to_python(self, value: Any) -> str | None:
        text = super().to_python(without_bidi_controls(value))
        # Invisible characters alone are blank, as in the API and the import.
        if text and not shows_words(text):
            return self.empty_value
        return text.replace("\r\n", "\n").replace("\r", "\n") if text else text

    def has_changed(self, initial: Any, data: Any) -> bool:
        if _is_digest(initial):  # the page's copy of what it showed
            try:
                return text_digest(self.to_python(data)) != initial
            except ValidationError:
                return True
        return super().has_changed(initial, data)


def _same(field: forms.Field, shown: Any, value: Any) -> bool:
    """Whether `value` (stored or posted) is the value a page showed as `shown` (its
    hidden copy, or a value)."""
    try:
        return not field.has_changed(field.to_python(shown), value)
    except ValidationError:
        return False


class CaseForm(forms.ModelForm):
    """A case on its page, or a row of the list's editable columns.

    Editing a case, the page carries hidden copies of the values it showed
    (`show_hidden_initial`), and `changed_data` compares with them rather than with the
    case as it is at the save: what a colleague saved since the page was opened is not
    taken for this page's change, and save_model writes only this page's changes. A field
    both changed is refused (`clean`), naming the colleague's value.
    """

    # Where the hidden copies are: beside each field on the page, after the list's table
    # for its rows (CaseRowForm).
    copies_in_cells = True

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
        # The stored values of the fields this page changed, read (and locked) by clean.
        self.stored: dict[str, Any] | None = None
        editing = not self.instance._state.adding
        # A select always posts its value, and with it its hidden copy. A post without it
        # did not come from such a page: it is compared with the case as it is now, as
        # Django does by default.
        self.compares_with_page = editing and (
            not self.is_bound
            or ("fault_category" in self.fields and self._copy_name("fault_category") in self.data)
        )
        # The fields the page keeps a copy of (a formset adds a row's key after them).
        self.copied = list(self.fields) if self.compares_with_page else []
        for field in self.fields.values():
            field.show_hidden_initial = self.compares_with_page and self.copies_in_cells
        field = self.fields.get("fault_category")
        kept = [self.instance.fault_category]
        if self.is_bound and self.compares_with_page:
            kept.append(self.data.get(self._copy_name("fault_category")))
        for current in dict.fromkeys(kept):
            if field is not None and current and current not in dict(field.choices):
                # A code from before the taxonomy (or one since removed) is shown as it
                # is, so that saving something else does not silently change it; and so
                # is the one the page showed, which a colleague may have changed since.
                field.choices = [*field.choices, (current, current)]
        # An automatic case holds the whole answer as both its root cause and its
        # solution: the page shows that text once. The solution stays empty, meaning
        # "the same text", until the operator writes one of its own. Posted, it is what
        # the page showed (its copy of the solution empty).
        self.solution_is_root_cause = bool(
            editing
            and "solution" in self.fields
            and (
                not (self.data.get(self._copy_name("solution")) or "").strip()
                if self.is_bound and self.compares_with_page
                else self.instance.solution.strip() == self.instance.root_cause.strip()
            )
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
        if self.compares_with_page:
            self._refuse_colleagues_changes()
        return data

    def _refuse_colleagues_changes(self) -> None:
        """A field this page changed that a colleague changed too since the page was
        opened (to another value) is refused, saying what it holds now.

        The case's row stays locked from this read to the save in the same transaction
        (the admin saves a page, and the list's rows, in one)."""
        mine = [name for name in self.changed_data if name not in self.errors]
        if not mine:
            return
        fields = [name for name in self.fields if name != self.instance._meta.pk.name]
        self.stored = case_fields_for_update(case_id=self.instance.pk, fields=fields)
        if self.stored is None:  # deleted meanwhile: the save says so, as Django does
            return
        for name in mine:
            field, now = self.fields[name], self.stored[name]
            if _same(field, self._shown(name), now) or _same(field, self._posted(name), now):
                continue  # nobody else changed it, or the colleague made the same change
            params = {"field": field.label, "value": Truncator(now or "").chars(QUOTED_CHARS)}
            message = CHANGED_BY_COLLEAGUE if now else EMPTIED_BY_COLLEAGUE
            self.add_error(
                name, ValidationError(message, code="changed_by_colleague", params=params)
            )

    def _copy_name(self, name: str) -> str:
        """The name of a field's hidden copy of the value the page showed."""
        return self.add_initial_prefix(name)

    def _shown(self, name: str) -> Any:
        if name == "solution" and self.solution_is_root_cause:
            name = "root_cause"  # the solution was that text, shown once
        return self.data.get(self._copy_name(name))

    def _posted(self, name: str) -> Any:
        value = self.cleaned_data.get(name)
        if name == "error_code" and value:
            return normalise_error_code(value)  # as the case stores it
        return value

    def changes(self, names: Any) -> dict[str, Any]:
        """The edited fields among `names`, with the solution kept equal to the root cause
        while it is shown as one text (and is one text still: a colleague may have written
        a solution of its own since)."""
        changed = {name: self.cleaned_data[name] for name in self.changed_data if name in names}
        stored = self.stored or {
            "root_cause": self.instance.root_cause,
            "solution": self.instance.solution,
        }
        if (
            self.solution_is_root_cause
            and "root_cause" in changed
            and "solution" not in changed
            and stored["solution"].strip() == stored["root_cause"].strip()
        ):
            changed["solution"] = changed["root_cause"]
        return changed

    def untouched(self, changes: Any) -> dict[str, Any]:
        """The stored values of this page's fields it leaves as they are, to show the case
        as saved (its history names it by its title now)."""
        return {name: value for name, value in (self.stored or {}).items() if name not in changes}

    @cached_property
    def changed_data(self) -> list[str]:
        # The stored text posted back, which the form trims, is no change: an answer kept
        # as sent (opening with an indented block, say) is not rewritten, nor logged as
        # changed, by a save that changes nothing.
        if self.is_bound and self.compares_with_page:
            changed = [name for name in self.copied if self._changed_since_shown(name)]
        else:
            changed = super().changed_data
        return [
            name
            for name in changed
            if not self._only_trimmed(name) and not self._only_respelled(name)
        ]

    def _changed_since_shown(self, name: str) -> bool:
        """Compared with the page's copy, as Django's `show_hidden_initial` compares."""
        field = self.fields[name]
        if field.disabled:
            return False
        try:
            shown = field.to_python(self.data.get(self._copy_name(name)))
        except ValidationError:
            return True
        return field.has_changed(shown, self[name].data)

    def copies_html(self) -> SafeString:
        """The hidden copies of the values the page showed."""
        return format_html_join(
            "", "{}", ((self[name].as_hidden(only_initial=True),) for name in self.copied)
        )

    def _only_trimmed(self, name: str) -> bool:
        stored = self.initial.get(name)
        cleaned = getattr(self, "cleaned_data", {}).get(name)
        if not isinstance(stored, str) or cleaned is None or self.instance._state.adding:
            return False
        return cleaned == stored.replace("\r\n", "\n").strip()

    def _only_respelled(self, name: str) -> bool:
        """An error code typed as another spelling of the code it was (`http_504` for
        `HTTP 504`): the case stores the same code, so nothing changes."""
        if name != "error_code" or self.instance._state.adding:
            return False
        # From the posted value, not cleaned_data: a list's formset asks which rows
        # changed before it cleans them.
        try:
            posted = self.fields[name].to_python(self[name].data)
        except ValidationError:
            return False
        if not posted:
            return False
        before = (
            self.data.get(self._copy_name(name))
            if self.is_bound and self.compares_with_page
            else self.initial.get(name)
        )
        return normalise_error_code(posted) == before


class CaseRowForm(CaseForm):
    """A row of the list's editable columns: a cell holds only what the operator edits
    (the list's script and styles find its input there); the row's hidden copies go with
    its key, after the table (CaseRowFormSet)."""

    copies_in_cells = False


class RowKeyInput(forms.HiddenInput):
    """A list row's key, followed by the row's hidden copies."""

    def __init__(self, form: CaseForm) -> None:
        super().__init__()
        self.form = form

    def render(self, *args: Any, **kwargs: Any) -> SafeString:
        return super().render(*args, **kwargs) + self.form.copies_html()


class CaseRowFormSet(forms.BaseModelFormSet):
    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        if getattr(form, "copied", None):
            form.fields[self._pk_field.name].widget = RowKeyInput(form)
