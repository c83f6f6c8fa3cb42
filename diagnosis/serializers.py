"""JSON shapes of the ingest and read API (camelCase keys)."""

from collections.abc import Callable
from typing import Any, NamedTuple

from django.core.validators import ProhibitNullCharactersValidator
from django.db import models
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import (
    ALLOWED_VALUES,
    NOT_A_STRING,
    NOT_AN_INTEGER,
    UNKNOWN_FIELD,
    UNPAIRED_SURROGATE,
    PageParameters,
    StrictCharField,
    StrictChoiceField,
    StrictInputSerializer,
    StrictIntegerField,
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
from diagnosis.services import InvocationFacts

INT_MAX = 2_147_483_647  # MySQL INT
SESSION_ID_HELP = "1-64 characters of A-Z a-z 0-9 . _ : -"
MAX_INVOCATIONS_PER_BATCH = 500
INVOCATION_ID_MAX_LENGTH = 64
TOOL_NAME_MAX_LENGTH = 128


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


# --- The tool-invocation validator --------------------------------------------------
#
# One function checks a tool invocation, for ToolInvocationInput and for the API view,
# which calls it without DRF's field machinery: agents send batches of hundreds, and
# that machinery, validating the same declarations, made the whole request 1.34-1.38x
# slower at 20 items, 1.40-1.69x at 100 and 1.44x at 500 (1.2x at one), measured
# through the test client on SQLite. It gives exactly the messages and values the
# declared fields would under DRF (tests/test_fast_paths.py compares the two on
# generated input).

_MISSING = object()
_REQUIRED = serializers.Field.default_error_messages["required"]
_NULL = serializers.Field.default_error_messages["null"]
_BLANK = serializers.CharField.default_error_messages["blank"]
_MAX_LENGTH = serializers.CharField.default_error_messages["max_length"]
_MIN_VALUE = serializers.IntegerField.default_error_messages["min_value"]
_MAX_VALUE = serializers.IntegerField.default_error_messages["max_value"]
_NUL = ProhibitNullCharactersValidator.message


class _Invalid(Exception):
    def __init__(self, *messages: object) -> None:
        self.messages = [str(message) for message in messages]


def _present(value: object, *, required: bool, nullable: bool) -> bool:
    """False for a value to take as it is (absent: the default; null where allowed)."""
    if value is _MISSING:
        if required:
            raise _Invalid(_REQUIRED)
        return False
    if value is None:
        if not nullable:
            raise _Invalid(_NULL)
        return False
    return True


def _text(value: object, *, max_length: int | None = None, blank: bool = False) -> str:
    if value == "" or str(value).strip() == "":
        if not blank:
            raise _Invalid(_BLANK)
        return ""
    if not isinstance(value, str):
        raise _Invalid(NOT_A_STRING)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid(UNPAIRED_SURROGATE) from None
    value = value.strip()
    problems = []
    if max_length is not None and len(value) > max_length:
        problems.append(str(_MAX_LENGTH).format(max_length=max_length))
    if "\x00" in value:
        problems.append(_NUL)
    if problems:
        raise _Invalid(*problems)
    return value


def _choice(value: object, choices: type[models.TextChoices]) -> str:
    if not isinstance(value, str) or value not in choices.values:
        allowed = ", ".join(choices.values)
        raise _Invalid(ALLOWED_VALUES.replace("{allowed}", allowed).format(input=value))
    return value


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Invalid(NOT_AN_INTEGER)
    if value > INT_MAX:
        raise _Invalid(str(_MAX_VALUE).format(max_value=INT_MAX))
    if value < 0:
        raise _Invalid(str(_MIN_VALUE).format(min_value=0))
    return value


class _Rule(NamedTuple):
    field: str  # ToolInvocation's (and the service's) name for it
    required: bool
    nullable: bool
    default: object  # when absent
    check: Callable[[object], object]


_INVOCATION_RULES: dict[str, _Rule] = {  # by JSON name, in the order errors are listed
    "invocationId": _Rule(
        "invocation_id", False, True, None, lambda v: _text(v, max_length=INVOCATION_ID_MAX_LENGTH)
    ),
    "toolName": _Rule(
        "tool_name", True, False, None, lambda v: _text(v, max_length=TOOL_NAME_MAX_LENGTH)
    ),
    "kind": _Rule("kind", False, False, ToolKind.RETRIEVAL.value, lambda v: _choice(v, ToolKind)),
    "status": _Rule("status", True, False, None, lambda v: _choice(v, InvocationStatus)),
    "matchLevel": _Rule("match_level", False, True, None, lambda v: _choice(v, MatchLevel)),
    "hitCount": _Rule("hit_count", False, False, 0, _count),
    "query": _Rule("query", False, True, None, lambda v: _text(v, blank=True)),
    "errorMessage": _Rule("error_message", False, True, None, lambda v: _text(v, blank=True)),
    "durationMs": _Rule("duration_ms", False, True, None, _count),
}


def tool_invocation_checked(data: Any) -> InvocationFacts:
    """The facts of one tool-invocation object, as the service takes them; a
    ValidationError naming each bad field otherwise."""
    if not isinstance(data, dict):
        raise serializers.ValidationError({"body": ["Expected a JSON object."]})
    unknown = sorted(set(data) - _INVOCATION_RULES.keys())
    if unknown:
        raise serializers.ValidationError({key: [UNKNOWN_FIELD] for key in unknown})
    facts: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name, rule in _INVOCATION_RULES.items():
        value = data.get(name, _MISSING)
        try:
            if not _present(value, required=rule.required, nullable=rule.nullable):
                value = rule.default if value is _MISSING else None
            else:
                value = rule.check(value)
        except _Invalid as invalid:
            errors[name] = invalid.messages
        facts[rule.field] = value
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


def match_level_problem(*, status: str, kind: str, match_level: str | None) -> str | None:
    """A match level is a fact about a successful retrieval; on anything else it is a lie."""
    if match_level is None:
        return None
    if status != InvocationStatus.SUCCESS:
        return "A failed call has no match level: leave matchLevel out or null."
    if kind != ToolKind.RETRIEVAL:
        return "Only retrieval calls have a match level: leave matchLevel out or null."
    return None


class ToolInvocationInput(StrictInputSerializer):
    """One tool invocation. The fields describe it (the OpenAPI schema is made from them);
    tool_invocation_checked() validates it, for this serializer and for the API alike."""

    invocationId = StrictCharField(
        max_length=INVOCATION_ID_MAX_LENGTH,
        required=False,
        allow_null=True,
        help_text="Idempotency key, unique per session: a retried call is stored once.",
    )
    toolName = StrictCharField(max_length=TOOL_NAME_MAX_LENGTH)
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

    def to_internal_value(self, data: Any) -> InvocationFacts:
        return tool_invocation_checked(data)


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
        return feedback_token_for(session_id=session.session_id)


class SessionCompletedOutput(FeedbackTokenMixin, SessionOutput):
    class Meta(SessionOutput.Meta):
        fields = [*SessionOutput.Meta.fields, "feedbackToken"]


class SessionDetailWithTokenOutput(FeedbackTokenMixin, SessionDetailOutput):
    class Meta(SessionDetailOutput.Meta):
        fields = [*SessionDetailOutput.Meta.fields, "feedbackToken"]


class RecordedInvocationsOutput(serializers.Serializer):
    sessionId = serializers.CharField()
    received = serializers.IntegerField(help_text="Invocations in the request.")
    created = serializers.IntegerField(help_text="Newly stored.")
    duplicates = serializers.IntegerField(
        help_text="Skipped: their invocationId was already stored (a retry)."
    )
