from rest_framework import serializers

from caselibrary.models import CaseLibrary, SourceType
from caselibrary.services.search import DEFAULT_SEARCH_LIMIT, MAX_QUERY_LENGTH, MAX_SEARCH_LIMIT
from config.api import StrictCharField, StrictInputSerializer, StrictIntegerField
from diagnosis.serializers import StrictSessionIdField


class CaseOutput(serializers.ModelSerializer):
    caseId = serializers.UUIDField(source="case_id", format="hex_verbose")
    sessionId = serializers.CharField(source="diagnosis_id", allow_null=True)
    sourceType = serializers.ChoiceField(SourceType.choices, source="source_type")
    faultCategory = serializers.CharField(source="fault_category")
    errorCode = serializers.CharField(source="error_code", allow_null=True)
    rootCause = serializers.CharField(source="root_cause")
    createdBy = serializers.CharField(source="created_by")
    updatedBy = serializers.CharField(source="updated_by")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    # The selectors' annotation. A case just created (POST) comes without one: a field that
    # allows null reads a missing attribute as null, and such a case is not merged.
    mergedInto = serializers.UUIDField(
        source="merged_into",
        format="hex_verbose",
        allow_null=True,
        read_only=True,
        help_text="The case this one was merged into as its near-duplicate (in the admin, or "
        "by an import): a merged case is left out of the list, is found through that case, "
        "and is still read by its id. Null for every case not merged.",
    )

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
            "mergedInto",
        ]


class StrictBooleanField(serializers.BooleanField):
    """A JSON true or false: "true", 1 and null are errors."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):  # type: ignore[no-untyped-def]
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


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
    explain = StrictBooleanField(
        required=False,
        default=False,
        help_text="Say for each hit why it was found (its lexical and dense ranks and the "
        "passage that matched), and why the answer is what it is (the decision's bars, the "
        "nearest similar case against them, the names no case mentions).",
    )


EXPLAIN_ONLY = "Only when the request asks `explain: true`; absent otherwise. "


class PassageOutput(serializers.Serializer):
    kind = serializers.CharField(
        help_text="Which part of the case: title, description, root_cause, solution or section."
    )
    text = serializers.CharField(help_text="The passage as indexed.")


class CaseHitExplainOutput(serializers.Serializer):
    """Why a case was found: its best passage's place in each ranking, and its figures."""

    lexicalRank = serializers.IntegerField(
        allow_null=True,
        help_text="The passage's rank (from 1) in the lexical (BM25) ranking; null when that "
        "ranking did not return it.",
    )
    denseRank = serializers.IntegerField(
        allow_null=True,
        help_text="The passage's rank (from 1) in the dense (embedding) ranking; null when "
        "that ranking did not return it.",
    )
    fusedScore = serializers.FloatField(
        help_text="What similar hits are ordered by: the reciprocal-rank fusion of both "
        "rankings plus CASE_SEARCH_COVERAGE_WEIGHT x termCoverage."
    )
    cosine = serializers.FloatField(
        allow_null=True,
        help_text="The case's best cosine to the query; null when no passage of the case is "
        "among the dense ranking's.",
    )
    termCoverage = serializers.FloatField(
        allow_null=True,
        help_text="The share (0-1) of the query's terms the passage holds; null when the "
        "query has no search term or no passage matched.",
    )
    passage = PassageOutput(
        allow_null=True,
        help_text="The passage that matched; null for an exact hit no ranking returned.",
    )


class NearestSimilarOutput(serializers.Serializer):
    # The canonical UUID string as stored (CaseLibrary.case_id), handed out as is.
    caseId = serializers.UUIDField(format="hex_verbose")
    title = serializers.CharField()
    offered = serializers.BooleanField(help_text="Whether it is among the hits.")
    peak = serializers.FloatField(
        allow_null=True,
        help_text="Its cosine above the query's to unrelated text; null without a cosine.",
    )
    termCoverage = serializers.FloatField(allow_null=True)
    cosine = serializers.FloatField(allow_null=True)


class SearchExplainOutput(serializers.Serializer):
    """Why the answer is what it is: the decision's bars and how the nearest case fared."""

    # A similar case is offered when its peak or its term coverage reaches its bar.

    minPeak = serializers.FloatField(help_text="The bar for `nearestSimilar.peak`.")
    minTermCoverage = serializers.FloatField(help_text="The bar for `nearestSimilar.termCoverage`.")
    unknownNames = serializers.ListField(
        child=serializers.CharField(),
        help_text=(
            "The query's names, and without an exact hit its error codes and alert names, "
            "that no case mentions; with one, no similar case is offered."
        ),
    )
    terms = serializers.ListField(
        child=serializers.CharField(),
        help_text=(
            "The query's search terms as the index reads them (its codes aside); with none "
            "(emoji, punctuation, a bare number), no similar case is offered, only exact ones."
        ),
    )
    nearestSimilar = NearestSimilarOutput(
        allow_null=True,
        help_text="The best similar case, offered or not; null when no case came near.",
    )


class CaseHitOutput(serializers.Serializer):
    caseId = serializers.UUIDField(source="case.case_id", format="hex_verbose")
    title = serializers.CharField(source="case.title")
    faultCategory = serializers.CharField(source="case.fault_category")
    errorCode = serializers.CharField(source="case.error_code", allow_null=True)
    rootCause = serializers.CharField(source="case.root_cause")
    solution = serializers.CharField(source="case.solution")
    score = serializers.FloatField(
        help_text="1 for an exact hit; else how close the case's best passage is to the "
        "query (cosine, 0-1; 0 for a case found by its words alone, below every passage the "
        "dense ranking kept; the share of the query's terms it holds in a degraded search)."
    )
    matchLevel = serializers.ChoiceField(["L0", "L1"], source="match_level")
    explain = CaseHitExplainOutput(
        required=False,
        help_text=EXPLAIN_ONLY + "Why this case was found.",
    )

    def to_representation(self, instance):  # type: ignore[no-untyped-def]
        data = super().to_representation(instance)
        if instance.explain is None:
            del data["explain"]
        return data


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
    degraded = serializers.BooleanField(
        source="found.degraded",
        help_text=(
            "A part of the search could not run: without the embedding model the hits are "
            "ranked by their terms alone; without the Milvus backend they are exact hits only."
        ),
    )
    explain = SearchExplainOutput(
        source="found.explain",
        required=False,
        help_text=EXPLAIN_ONLY + "Why the answer is what it is, NONE included.",
    )

    def to_representation(self, instance):  # type: ignore[no-untyped-def]
        data = super().to_representation(instance)
        if instance.found.explain is None:
            del data["explain"]
        return data
