"""JSON shapes of the ingest and read API (camelCase keys)."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import (
    PageParameters,
    StrictCharField,
    StrictChoiceField,
    StrictInputSerializer,
    StrictIntegerField,
)
from diagnosis.models import (
    SESSION_ID_MAX_LENGTH,
    SESSION_ID_REGEX,
    DiagnosisSession,
    Feedback,
    InvocationStatus,
    MatchLevel,
    SessionStatus,
    ToolInvocation,
    ToolKind,
    match_level_problem,
)

INT_MAX = 2_147_483_647  # MySQL INT
SESSION_ID_HELP = "1-64 characters of A-Z a-z 0-9 . _ : -"


class StrictSessionIdField(serializers.RegexField):
    """A sessionId in a request body: a JSON string of the allowed characters, as sent."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", SESSION_ID_MAX_LENGTH)
        kwargs.setdefault("error_messages", {"invalid": f"A sessionId is {SESSION_ID_HELP}."})
        super().__init__(SESSION_ID_REGEX, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class SessionStartInput(StrictInputSerializer):
    sessionId = StrictSessionIdField(
        required=False, help_text=f"Generated (a UUID) when absent. {SESSION_ID_HELP}."
    )
    query = StrictCharField(help_text="The operator's question.")
    userId = StrictCharField(max_length=64, required=False, allow_null=True)


class ToolInvocationInput(StrictInputSerializer):
    invocationId = StrictCharField(
        max_length=64,
        required=False,
        allow_null=True,
        help_text="Idempotency key, unique per session: a retried call is stored once.",
    )
    toolName = StrictCharField(max_length=128)
    kind = StrictChoiceField(ToolKind.choices, required=False, default=ToolKind.RETRIEVAL)
    status = StrictChoiceField(InvocationStatus.choices)
    matchLevel = StrictChoiceField(
        MatchLevel.choices,
        required=False,
        allow_null=True,
        help_text="Successful retrieval calls only: L0 exact, L1 semantic, NONE.",
    )
    hitCount = StrictIntegerField(min_value=0, max_value=INT_MAX, required=False, default=0)
    query = StrictCharField(required=False, allow_null=True, allow_blank=True)
    errorMessage = StrictCharField(required=False, allow_null=True, allow_blank=True)
    durationMs = StrictIntegerField(min_value=0, max_value=INT_MAX, required=False, allow_null=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problem = match_level_problem(
            status=attrs["status"], kind=attrs["kind"], match_level=attrs.get("matchLevel")
        )
        if problem:
            raise serializers.ValidationError({"matchLevel": [problem]})
        return attrs

    @staticmethod
    def to_service(attrs: dict[str, Any]) -> dict[str, Any]:
        return {
            "invocation_id": attrs.get("invocationId"),
            "tool_name": attrs["toolName"],
            "kind": attrs["kind"],
            "status": attrs["status"],
            "match_level": attrs.get("matchLevel"),
            "hit_count": attrs["hitCount"],
            "query": attrs.get("query"),
            "error_message": attrs.get("errorMessage"),
            "duration_ms": attrs.get("durationMs"),
        }


class SessionCompleteInput(StrictInputSerializer):
    status = StrictChoiceField(
        [(s.value, s.label) for s in (SessionStatus.SUCCESS, SessionStatus.FAILED)]
    )
    answer = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="The full answer given to the user; required for SUCCESS.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        answer = attrs.get("answer")
        if attrs["status"] == SessionStatus.SUCCESS and (answer is None or not answer.strip()):
            raise serializers.ValidationError(
                {"answer": ["A SUCCESS completion needs the answer."]}
            )
        return attrs


class SessionListFilters(PageParameters):
    status = StrictChoiceField(SessionStatus.choices, required=False)
    feedback = StrictChoiceField([*Feedback.values, "none"], required=False)
    createdAfter = serializers.DateTimeField(required=False)
    createdBefore = serializers.DateTimeField(required=False)


# --- Output -----------------------------------------------------------------


class ToolInvocationOutput(serializers.ModelSerializer):
    invocationId = serializers.CharField(source="invocation_id", allow_null=True)
    toolName = serializers.CharField(source="tool_name")
    matchLevel = serializers.CharField(source="match_level", allow_null=True)
    hitCount = serializers.IntegerField(source="hit_count")
    errorMessage = serializers.CharField(source="error_message", allow_null=True)
    durationMs = serializers.IntegerField(source="duration_ms", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")

    class Meta:
        model = ToolInvocation
        fields = [
            "invocationId",
            "toolName",
            "kind",
            "status",
            "matchLevel",
            "hitCount",
            "query",
            "errorMessage",
            "durationMs",
            "createdAt",
        ]


class FactorOutput(serializers.Serializer):
    name = serializers.CharField()
    delta = serializers.IntegerField()
    description = serializers.CharField()


class SelfEvaluationOutput(serializers.Serializer):
    evidence_score = serializers.IntegerField(min_value=0, max_value=100)
    source = serializers.CharField()
    factors = FactorOutput(many=True)
    rules_version = serializers.IntegerField(
        required=False, help_text="The rule set that scored it (absent on older scores)."
    )


@extend_schema_field(SelfEvaluationOutput(allow_null=True))
class SelfEvaluationField(serializers.JSONField):
    """Stored JSON returned as is (keys in stored order); null while pending."""


class SessionOutput(serializers.ModelSerializer):
    sessionId = serializers.CharField(source="session_id")
    userId = serializers.CharField(source="user_id", allow_null=True)
    selfEvaluation = SelfEvaluationField(
        source="self_evaluation",
        allow_null=True,
        help_text="null while scoring is pending (or failed).",
    )
    feedback = serializers.CharField(allow_null=True)
    feedbackAt = serializers.DateTimeField(source="feedback_at", allow_null=True)
    caseId = serializers.SerializerMethodField()
    createdAt = serializers.DateTimeField(source="created_at")
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)

    class Meta:
        model = DiagnosisSession
        fields = [
            "sessionId",
            "query",
            "userId",
            "status",
            "answer",
            "selfEvaluation",
            "feedback",
            "feedbackAt",
            "caseId",
            "createdAt",
            "finishedAt",
        ]

    @extend_schema_field({"type": "string", "format": "uuid", "nullable": True})
    def get_caseId(self, session: DiagnosisSession) -> str | None:
        return getattr(session, "linked_case_id", None)


class SessionDetailOutput(SessionOutput):
    toolInvocations = ToolInvocationOutput(many=True, source="invocations")
    duplicateRecalls = serializers.IntegerField(
        source="duplicate_recalls",
        help_text=(
            "Case-library searches of this session that repeated an earlier one (the same "
            "question, or the same cases found): a retrieval loop."
        ),
    )

    class Meta(SessionOutput.Meta):
        fields = [*SessionOutput.Meta.fields, "toolInvocations", "duplicateRecalls"]


class RecordedInvocationsOutput(serializers.Serializer):
    sessionId = serializers.CharField()
    received = serializers.IntegerField(help_text="Invocations in the request.")
    created = serializers.IntegerField(help_text="Newly stored.")
    duplicates = serializers.IntegerField(
        help_text="Skipped: their invocationId was already stored (a retry)."
    )
