"""A case as people give it: the one check of `POST /api/cases` and of every case that
`import_cases` reads (a JSONL or CSV row, a Markdown runbook), so the two cannot disagree.
"""

import uuid
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers
from rest_framework.fields import Field

from caselibrary.models import SourceType
from caselibrary.passages import INDEXED_CHARS
from config.api import (
    NOT_A_STRING,
    UNKNOWN_FIELD,
    UNPAIRED_SURROGATE,
    StrictCharField,
    StrictChoiceField,
    StrictInputSerializer,
    StrictUUIDField,
)
from diagnosis.serializers import StrictSessionIdField
from diagnosis.text import without_bidi_controls

# Each CaseLibrary field a case's input sets, by the name its JSON gives it.
JSON_NAMES = {
    "title": "title",
    "root_cause": "rootCause",
    "solution": "solution",
    "fault_category": "faultCategory",
    "error_code": "errorCode",
    "diagnosis": "sessionId",
}


class CaseTextField(StrictCharField):
    """A case's text, taken in without bidirectional controls (diagnosis.text) before
    the field's own rules (trimmed, blank, length) read it."""

    def to_internal_value(self, data: Any) -> str:
        return super().to_internal_value(without_bidi_controls(data))


class CaseCreateInput(StrictInputSerializer):
    """A MANUAL case, as a curator's tool sends it."""

    title = CaseTextField(max_length=255)
    # 200,000 characters: what the search index reads of a text (caselibrary/passages.py).
    rootCause = CaseTextField(max_length=INDEXED_CHARS)
    solution = CaseTextField(max_length=INDEXED_CHARS)
    faultCategory = StrictCharField(
        max_length=64, required=False, help_text="A code of the fault-category taxonomy."
    )
    errorCode = CaseTextField(max_length=64, required=False, allow_null=True)
    sessionId = StrictSessionIdField(
        required=False, help_text="The session the case is about (one case per session)."
    )


class CaseIdField(StrictCharField):
    """A case's id as a file names another case: a string of at most a case id's length,
    a UUID read in its canonical form as `caseId` reads it (so both name the same case)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=36, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        try:
            return str(uuid.UUID(value))
        except ValueError:
            return value


class KeptTextField(CaseTextField):
    """A text kept as written, the blanks around it too (an answer may open with an
    indented block), but for bidirectional controls; blanks alone are no text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)

    def run_validation(self, data: Any = serializers.empty) -> Any:
        if isinstance(data, str) and data and not data.strip():
            self.fail("blank")
        return super().run_validation(data)


class CaseFileRow(CaseCreateInput):
    """A case in a file: the API's case, and what `export_cases` writes of a case besides,
    so an export reads back (caselibrary/case_files.py)."""

    # An AUTO case holds a session's whole answer as sent, the blanks around it too, and
    # may be longer than the API takes of a case (`read` checks and trims other rows as
    # the API does).
    rootCause = KeptTextField(max_length=None)
    solution = KeptTextField(max_length=None)
    # The case the row updates.
    caseId = StrictUUIDField(required=False)
    sourceType = StrictChoiceField(SourceType.values, required=False)
    createdBy = CaseTextField(max_length=64, required=False)
    # The case the row's case is merged into (caselibrary/services/imports.py).
    mergedInto = CaseIdField(required=False)

    def read(self, given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]]]:
        """The case a row gives, and each rule it breaks by its field, worded for people in
        the active language. An unknown key is told with every rule the other fields break
        (the API's check stops at it). When a rule is broken, the case has the fields that
        keep theirs, so that what is checked of them later is told at once too."""
        problems = {
            name: [str(_OWN_RULES[UNKNOWN_FIELD])] for name in given if name not in self.fields
        }
        known = {name: value for name, value in given.items() if name in self.fields}
        try:
            case = self.run_validation(known)
        except serializers.ValidationError as exc:
            for name, rules in exc.detail.items():
                field = self.fields.get(name)
                problems[name] = [_rule(rule, field, known.get(name)) for rule in rules]
            case = {
                name: self.fields[name].run_validation(value)
                for name, value in known.items()
                if name not in problems
            }
        limit = self.text_limit(case.get("sourceType"))
        for name in ("rootCause", "solution"):
            if name in case and case.get("sourceType") != SourceType.AUTO:
                case[name] = case[name].strip()  # as the API trims a case's texts
            if len(case.get(name) or "") > limit:
                rule = self.fields[name].error_messages["max_length"]
                problems[name] = [str(rule).format(max_length=limit)]
                del case[name]
        return case, problems

    @staticmethod
    def text_limit(source_type: str | None) -> int:
        """The longest rootCause and solution of a row: the API's, but for an AUTO case
        (export_cases writes its sourceType) the longest answer a session can hold: a
        character takes a byte at least of the largest request body the service reads."""
        if source_type != SourceType.AUTO:
            return INDEXED_CHARS
        return max(settings.API_MAX_BODY_BYTES, settings.OTLP_MAX_BODY_BYTES)


# The rules our own fields break are English constants, as the API gives them to programs
# (config/api.py, diagnosis/serializers.py); a file's rows are read by people, in their
# language. DRF's own rules come in the active language already (DRF's and Django's
# catalogues).
_OWN_RULES = {
    UNKNOWN_FIELD: gettext_lazy("Unknown field."),
    NOT_A_STRING: gettext_lazy("Must be a string."),
    UNPAIRED_SURROGATE: gettext_lazy("Contains an unpaired surrogate."),
    CaseFileRow().fields["sessionId"].error_messages["invalid"]: gettext_lazy(
        'A sessionId is 1-64 characters of A-Z a-z 0-9 . _ : -, not "." or "..".'
    ),
}


def _rule(rule: serializers.ErrorDetail, field: Field | None, value: Any) -> str:
    """A field's rule in the active language: DRF's as DRF words it, ours translated."""
    if isinstance(field, StrictChoiceField) and rule.code == "invalid_choice":
        # Its English names the value and the allowed ones (config/api.py).
        return _('Unknown value "%(value)s". Allowed values: %(allowed)s.') % {
            "value": value,
            "allowed": ", ".join(str(choice) for choice in field.choices),
        }
    own = _OWN_RULES.get(str(rule))
    return str(own) if own is not None else str(rule)


def in_json_names(error: DjangoValidationError) -> serializers.ValidationError:
    """The model's refusal of a case, each field named by its JSON path as the API's
    errors are."""
    if not hasattr(error, "error_dict"):
        return serializers.ValidationError(error.messages)
    return serializers.ValidationError(
        {JSON_NAMES.get(name, name): messages for name, messages in error.message_dict.items()}
    )
