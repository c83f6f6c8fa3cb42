"""A case as people give it: the one check of `POST /api/cases` and of every case that
`import_cases` reads (a JSONL or CSV row, a Markdown runbook), so the two cannot disagree.
"""

from caselibrary.models import SourceType
from config.api import StrictCharField, StrictChoiceField, StrictInputSerializer, StrictUUIDField
from diagnosis.serializers import StrictSessionIdField


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
