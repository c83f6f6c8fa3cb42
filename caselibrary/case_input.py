"""A case as people give it: the one check of `POST /api/cases` and of every case that
`import_cases` reads (a JSONL or CSV row, a Markdown runbook), so the two cannot disagree.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from caselibrary.models import SourceType
from config.api import StrictCharField, StrictChoiceField, StrictInputSerializer, StrictUUIDField
from diagnosis.serializers import StrictSessionIdField

# Each CaseLibrary field a case's input sets, by the name its JSON gives it.
JSON_NAMES = {
    "title": "title",
    "root_cause": "rootCause",
    "solution": "solution",
    "fault_category": "faultCategory",
    "error_code": "errorCode",
    "diagnosis": "sessionId",
}


class CaseCreateInput(StrictInputSerializer):
    """A MANUAL case, as a curator's tool sends it."""

    title = StrictCharField(max_length=255)
    rootCause = StrictCharField(max_length=200_000)
    solution = StrictCharField(max_length=200_000)
    faultCategory = StrictCharField(
        max_length=64, required=False, help_text="A code of the fault-category taxonomy."
    )
    errorCode = StrictCharField(max_length=64, required=False, allow_null=True)
    sessionId = StrictSessionIdField(
        required=False, help_text="The session the case is about (one case per session)."
    )


class CaseFileRow(CaseCreateInput):
    """A case in a file: the API's case, and what `export_cases` writes of a case besides,
    so an export reads back (caselibrary/case_files.py)."""

    # The case the row updates.
    caseId = StrictUUIDField(required=False)
    sourceType = StrictChoiceField(SourceType.values, required=False)
    createdBy = StrictCharField(max_length=64, required=False)


def in_json_names(error: DjangoValidationError) -> serializers.ValidationError:
    """The model's refusal of a case, each field named by its JSON path as the API's
    errors are."""
    if not hasattr(error, "error_dict"):
        return serializers.ValidationError(error.messages)
    return serializers.ValidationError(
        {JSON_NAMES.get(name, name): messages for name, messages in error.message_dict.items()}
    )
