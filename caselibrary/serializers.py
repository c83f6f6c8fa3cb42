from rest_framework import serializers

from caselibrary.models import CaseLibrary
from caselibrary.services.search import DEFAULT_SEARCH_LIMIT, MAX_QUERY_LENGTH, MAX_SEARCH_LIMIT
from config.api import StrictCharField, StrictInputSerializer, StrictIntegerField
from diagnosis.serializers import StrictSessionIdField


class CaseOutput(serializers.ModelSerializer):
    caseId = serializers.UUIDField(source="case_id", format="hex_verbose")
    sessionId = serializers.CharField(source="diagnosis_id", allow_null=True)
    sourceType = serializers.CharField(source="source_type")
    faultCategory = serializers.CharField(source="fault_category")
    errorCode = serializers.CharField(source="error_code", allow_null=True)
    rootCause = serializers.CharField(source="root_cause")
    createdBy = serializers.CharField(source="created_by")
    updatedBy = serializers.CharField(source="updated_by")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    class Meta:
        model = CaseLibrary
        fields = [
            "caseId",
            "sessionId",
            "sourceType",
            "faultCategory",
            "errorCode",
            "title",
            "rootCause",
            "solution",
            "createdBy",
            "updatedBy",
            "createdAt",
            "updatedAt",
        ]


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


class CaseSearchInput(StrictInputSerializer):
    sessionId = StrictSessionIdField(
        required=False,
        help_text=(
            "The RUNNING session searching: the search is recorded as its CaseLibrarySearch "
            "tool invocation, so scoring counts the hit."
        ),
    )
    query = StrictCharField(
        max_length=MAX_QUERY_LENGTH, help_text="The question or the alert text to look up."
    )
    errorCode = StrictCharField(
        max_length=64,
        required=False,
        allow_null=True,
        help_text="An error code to match exactly (also found in the query by itself).",
    )
    limit = StrictIntegerField(
        min_value=1, max_value=MAX_SEARCH_LIMIT, required=False, default=DEFAULT_SEARCH_LIMIT
    )


class CaseHitOutput(serializers.Serializer):
    caseId = serializers.CharField(source="case.case_id")
    title = serializers.CharField(source="case.title")
    faultCategory = serializers.CharField(source="case.fault_category")
    errorCode = serializers.CharField(source="case.error_code", allow_null=True)
    rootCause = serializers.CharField(source="case.root_cause")
    solution = serializers.CharField(source="case.solution")
    score = serializers.FloatField(
        help_text="1 for an exact hit; else the share of the query matched."
    )
    matchLevel = serializers.ChoiceField(["L0", "L1"], source="match_level")


class CaseSearchOutput(serializers.Serializer):
    matchLevel = serializers.ChoiceField(
        ["L0", "L1", "NONE"], source="found.match_level", help_text="The best hit's level."
    )
    hits = CaseHitOutput(many=True, source="found.matches")
    repeat = serializers.BooleanField(
        help_text="The session asked this before (or got these cases before): a repeated recall."
    )
    invocationId = serializers.CharField(
        source="invocation_id", allow_null=True, help_text="The tool invocation recorded, if any."
    )
