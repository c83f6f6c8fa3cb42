"""JSON shapes of the ingest and read API (camelCase keys)."""

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import (
    UNKNOWN_FIELD,
    PageParameters,
    StrictCharField,
    StrictChoiceField,
    StrictInputSerializer,
    StrictIntegerField,
)
from diagnosis.facts_rules import (
    COMPLETION_STATUSES,
    INT_MAX,
    INVOCATION_FACTS,
    INVOCATION_ID_MAX_LENGTH,
    NOT_AN_OBJECT,
    NULL,
    REQUIRED,
    SESSION_ID_HELP,
    SESSION_ID_INVALID,
    TOOL_NAME_MAX_LENGTH,
    USER_ID_MAX_LENGTH,
    answer_problem,
    match_level_problem,
    session_id_problems,
)
from diagnosis.feedback_tokens import feedback_token_for
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
)
from diagnosis.self_evaluation import in_contract_order
from diagnosis.services import InvocationFacts, stored_answer, stored_identifier, stored_text

MAX_INVOCATIONS_PER_BATCH = 500


class StrictSessionIdField(serializers.RegexField):
    """A sessionId in a request body: a JSON string of the allowed characters, as sent."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", SESSION_ID_MAX_LENGTH)
        kwargs.setdefault("error_messages", {"invalid": SESSION_ID_INVALID})
        super().__init__(SESSION_ID_REGEX, trim_whitespace=False, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        # The rule's own problems; the validators the declaration adds (for the schema)
        # only see ids that keep it.
        problems = session_id_problems(data)
        if problems:
            raise serializers.ValidationError(problems)
        return data


class StoredTextField(StrictCharField):
    """Text as the service stores it (diagnosis.services.stored_text, or `stored`): checked
    as it will be stored, so that the rules (blank, length) see what the service keeps."""

    def __init__(self, *, stored: Callable[[Any], Any] = stored_text, **kwargs: Any) -> None:
        # Trimmed by stored_text() below, the service's rule, not by DRF's own.
        super().__init__(trim_whitespace=False, **kwargs)
        self.stored = stored

    def run_validation(self, data: Any = serializers.empty) -> Any:
        return super().run_validation(self.stored(data))


class SessionStartInput(StrictInputSerializer):
    sessionId = StrictSessionIdField(
        required=False, help_text=f"Generated (a UUID) when absent. {SESSION_ID_HELP}."
    )
    query = StoredTextField(help_text="The operator's question.")
    userId = StoredTextField(max_length=USER_ID_MAX_LENGTH, required=False, allow_null=True)


# --- The tool-invocation validator --------------------------------------------------
#
# One function checks a tool invocation, for ToolInvocationInput and for the API view,
# which calls it without DRF's field machinery: agents send batches of hundreds, and
# that machinery, validating the same declarations, made the whole request 1.34-1.38x
# slower at 20 items, 1.40-1.69x at 100 and 1.44x at 500 (1.2x at one), measured
# through the test client on SQLite. It gives exactly the messages and values the
# declared fields would under DRF (tests/test_fast_paths.py compares the two on
# generated input). The rules are diagnosis/facts_rules.py's INVOCATION_FACTS, which the
# services check in-process callers' facts with.

_FACTS_BY_NAME = {fact.name: (field, fact) for field, fact in INVOCATION_FACTS.items()}


def tool_invocation_checked(data: Any) -> InvocationFacts:
    """The facts of one tool-invocation object, as the service takes them; a
    ValidationError naming each bad field otherwise."""
    if not isinstance(data, dict):
        raise serializers.ValidationError({"body": [NOT_AN_OBJECT]})
    unknown = sorted(set(data) - _FACTS_BY_NAME.keys())
    if unknown:
        raise serializers.ValidationError({key: [UNKNOWN_FIELD] for key in unknown})
    facts: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name, (field, fact) in _FACTS_BY_NAME.items():
        if name not in data:
            if fact.required:
                errors[name] = [str(REQUIRED)]
            value = fact.default
        else:
            value = data[name]
            if value is None:
                if not fact.nullable:
                    errors[name] = [str(NULL)]
            else:
                if fact.trimmed:
                    value = stored_identifier(value) if fact.identifier else stored_text(value)
                problems = fact.check(value)
                if problems:
                    errors[name] = problems
        facts[field] = value
    if errors:
        raise serializers.ValidationError(errors)
    problem = match_level_problem(
        status=facts["status"], kind=facts["kind"], match_level=facts["match_level"]
    )
    if problem:
        raise serializers.ValidationError({"matchLevel": [problem]})
    return InvocationFacts(**facts)


def tool_invocations_checked(body: Any) -> list[InvocationFacts]:
    """A tool-invocations body (one object or a list of them), all valid or a
    ValidationError naming each bad item (by its index, in a list) and field."""
    items = body if isinstance(body, list) else [body]
    if not items:
        raise serializers.ValidationError({"body": ["Send at least one tool invocation."]})
    if len(items) > MAX_INVOCATIONS_PER_BATCH:
        raise serializers.ValidationError(
            {"body": [f"At most {MAX_INVOCATIONS_PER_BATCH} tool invocations."]}
        )
    if not all(isinstance(item, dict) for item in items):
        raise serializers.ValidationError(
            {"body": ["Expected a JSON object or a list of JSON objects."]}
        )
    checked, errors = [], []
    for item in items:
        try:
            checked.append(tool_invocation_checked(item))
            errors.append({})
        except serializers.ValidationError as exc:
            errors.append(exc.detail)
    if any(errors):
        raise serializers.ValidationError(errors if isinstance(body, list) else errors[0])
    return checked


class ToolInvocationInput(StrictInputSerializer):
    """One tool invocation. The fields describe it (the OpenAPI schema is made from them);
    tool_invocation_checked() validates it, for this serializer and for the API alike."""

    invocationId = StoredTextField(
        stored=stored_identifier,
        max_length=INVOCATION_ID_MAX_LENGTH,
        required=False,
        allow_null=True,
        help_text="Idempotency key, unique per session: a retried call is stored once.",
    )
    toolName = StoredTextField(max_length=TOOL_NAME_MAX_LENGTH)
    kind = StrictChoiceField(ToolKind.choices, required=False, default=ToolKind.RETRIEVAL)
    status = StrictChoiceField(InvocationStatus.choices)
    matchLevel = StrictChoiceField(
        MatchLevel.choices,
        required=False,
        allow_null=True,
        help_text="Successful retrieval calls only: L0 exact, L1 semantic, NONE.",
    )
    hitCount = StrictIntegerField(min_value=0, max_value=INT_MAX, required=False, default=0)
    query = StoredTextField(required=False, allow_null=True, allow_blank=True)
    errorMessage = StoredTextField(required=False, allow_null=True, allow_blank=True)
    durationMs = StrictIntegerField(min_value=0, max_value=INT_MAX, required=False, allow_null=True)

    def to_internal_value(self, data: Any) -> InvocationFacts:
        return tool_invocation_checked(data)


class SessionCompleteInput(StrictInputSerializer):
    status = StrictChoiceField(
        [(status, SessionStatus(status).label) for status in COMPLETION_STATUSES.order]
    )
    answer = StoredTextField(
        # Kept as sent, for the case it may become (Markdown may open with an indent),
        # but for bidirectional controls.
        stored=stored_answer,
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="The full answer given to the user, stored as sent; required for SUCCESS.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        problem = answer_problem(status=attrs["status"], answer=attrs.get("answer"))
        if problem:
            raise serializers.ValidationError({"answer": [problem]})
        return attrs


class SessionListFilters(PageParameters):
    status = StrictChoiceField(SessionStatus.choices, required=False)
    feedback = StrictChoiceField([*Feedback.values, "none"], required=False)
    createdAfter = serializers.DateTimeField(required=False)
    createdBefore = serializers.DateTimeField(required=False)


# --- Output -----------------------------------------------------------------


# Output fields declared rather than made from the model: a field every response has is
# required in the schema, and a choice says its values (the values are the stored ones).


class ToolInvocationOutput(serializers.ModelSerializer):
    invocationId = serializers.CharField(source="invocation_id", allow_null=True)
    toolName = serializers.CharField(source="tool_name")
    kind = serializers.ChoiceField(ToolKind.choices)
    matchLevel = serializers.ChoiceField(MatchLevel.choices, source="match_level", allow_null=True)
    hitCount = serializers.IntegerField(source="hit_count")
    query = serializers.CharField(allow_null=True)
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


class OpinionFactorOutput(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.BooleanField()
    rationale = serializers.CharField()


class OpinionOutput(serializers.Serializer):
    """An opinion of the answer, formed after the rule score and stored beside it."""

    source = serializers.ChoiceField(["llm", "heuristic"])
    model = serializers.CharField()
    version = serializers.CharField()
    factors = OpinionFactorOutput(many=True)
    created_at = serializers.DateTimeField()


class SelfEvaluationOutput(serializers.Serializer):
    evidence_score = serializers.IntegerField(min_value=0, max_value=100)
    # `rule` is what the rules write; `llm` is reserved for a scoring layer (SPEC §3).
    source = serializers.ChoiceField(["rule", "llm"])
    factors = FactorOutput(many=True)
    rules_version = serializers.IntegerField(
        required=False, help_text="The rule set that scored it (absent on older scores)."
    )
    llm_opinion = OpinionOutput(
        required=False,
        help_text="The opinion of the answer, once formed; absent before, and without a "
        "provider (OPINION_PROVIDER=off).",
    )


@extend_schema_field(SelfEvaluationOutput(allow_null=True))
class SelfEvaluationField(serializers.JSONField):
    """The stored JSON with its keys in the contract's order, whatever order the database
    gives them in (diagnosis/self_evaluation.py); null while pending."""

    def to_representation(self, value: Any) -> Any:
        return super().to_representation(in_contract_order(value))


class SessionOutput(serializers.ModelSerializer):
    sessionId = serializers.CharField(source="session_id")
    userId = serializers.CharField(source="user_id", allow_null=True)
    status = serializers.ChoiceField(SessionStatus.choices)
    answer = serializers.CharField(allow_null=True)
    selfEvaluation = SelfEvaluationField(
        source="self_evaluation",
        allow_null=True,
        help_text="null while scoring is pending (or failed).",
    )
    feedback = serializers.ChoiceField(Feedback.choices, allow_null=True)
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


class FeedbackTokenMixin(serializers.Serializer):
    """`feedbackToken`: what the agent's back end hands to the page showing the answer, so
    the reader can rate it (POST /api/feedback, `Authorization: Feedback <token>`). Only a
    key that may ingest gets one; null for the others."""

    feedbackToken = serializers.SerializerMethodField(
        help_text=(
            "Signed, good only for this session's feedback, for FEEDBACK_TOKEN_MAX_AGE "
            "seconds (7 days by default); null unless the key has the ingest permission."
        )
    )

    @extend_schema_field({"type": "string", "nullable": True})
    def get_feedbackToken(self, session: DiagnosisSession) -> str | None:
        if not self.context.get("with_feedback_token"):
            return None
        return feedback_token_for(session_id=session.session_id, session_pk=session.pk)


class SessionCompletedOutput(FeedbackTokenMixin, SessionOutput):
    class Meta(SessionOutput.Meta):
        fields = [*SessionOutput.Meta.fields, "feedbackToken"]


class SessionDetailWithTokenOutput(FeedbackTokenMixin, SessionDetailOutput):
    class Meta(SessionDetailOutput.Meta):
        fields = [*SessionDetailOutput.Meta.fields, "feedbackToken"]


class FeedbackTokenOutput(serializers.Serializer):
    """A fresh feedback token (diagnosis/feedback_tokens.py IssuedFeedbackToken)."""

    sessionId = serializers.CharField(source="session_id")
    feedbackToken = serializers.CharField(
        source="token",
        help_text=(
            "Signed, good only for this session's feedback (POST /api/feedback, "
            "`Authorization: Feedback <token>`)."
        ),
    )
    expiresIn = serializers.IntegerField(
        source="expires_in",
        help_text="Seconds the token stays good (FEEDBACK_TOKEN_MAX_AGE; 7 days by default).",
    )


class RecordedInvocationsOutput(serializers.Serializer):
    sessionId = serializers.CharField()
    received = serializers.IntegerField(help_text="Invocations in the request.")
    created = serializers.IntegerField(help_text="Newly stored.")
    duplicates = serializers.IntegerField(
        help_text=(
            "Skipped: their invocationId was already stored with the same facts (a retry). "
            "One sent again with other facts is refused: 409 invocation_conflict."
        )
    )
