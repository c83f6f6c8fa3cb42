"""The /api/feedback body. Messages are the contract's (Chinese), one per problem."""

from typing import Any

from rest_framework import serializers

from diagnosis.models import SESSION_ID_MAX_LENGTH, SESSION_ID_REGEX, Feedback
from feedback.models import COMMENT_MAX_LENGTH, FeedbackReason

FEEDBACK_RECORDED = "反馈已记录"
ALLOWED_FEEDBACK = ", ".join(Feedback.values)
INVALID_FEEDBACK = f"feedback 取值无效，允许的值：{ALLOWED_FEEDBACK}"
NOT_A_JSON_OBJECT = "请求体必须是 JSON 对象"
ALLOWED_REASONS = ", ".join(FeedbackReason.values)
INVALID_REASON = f"reason 取值无效，允许的值：{ALLOWED_REASONS}"
CORRECTION_MAX_LENGTH = 10_000
CREDENTIAL_IN_BODY = "反馈令牌只能放在请求头中：Authorization: Feedback <token>"
# Keys a client might put a token under by mistake: refused, never read.
TOKEN_BODY_KEYS = ("token", "feedbackToken", "feedback_token")


class SessionIdField(serializers.RegexField):
    default_error_messages = {
        "required": "缺少 sessionId",
        "null": "缺少 sessionId",
        "not_a_string": "sessionId 必须是字符串",
        "blank": "sessionId 不能为空",
        "max_length": f"sessionId 不能超过 {SESSION_ID_MAX_LENGTH} 个字符",
        "invalid": "sessionId 只能包含 A-Z a-z 0-9 . _ : -",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            SESSION_ID_REGEX, max_length=SESSION_ID_MAX_LENGTH, trim_whitespace=False, **kwargs
        )

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        if not data.strip():
            self.fail("blank")
        return super().to_internal_value(data)


class FeedbackValueField(serializers.ChoiceField):
    """Exactly "useful" or "not_useful": "Useful", " useful", null, 1 and true are not."""

    default_error_messages = {
        "required": INVALID_FEEDBACK,
        "null": INVALID_FEEDBACK,
        "invalid_choice": INVALID_FEEDBACK,
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Feedback.choices, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class ReasonField(serializers.ChoiceField):
    default_error_messages = {"invalid_choice": INVALID_REASON}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(FeedbackReason.choices, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class FreeTextField(serializers.CharField):
    """A reader's own words: a string (null or "" for none), kept as typed."""

    def __init__(self, name: str, max_length: int, **kwargs: Any) -> None:
        super().__init__(
            required=False,
            allow_blank=True,
            allow_null=True,
            trim_whitespace=False,
            max_length=max_length,
            error_messages={
                "invalid": f"{name} 必须是字符串",
                "max_length": f"{name} 不能超过 {max_length} 个字符",
            },
            **kwargs,
        )

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            self.fail("invalid")
        return super().to_internal_value(data.replace("\x00", ""))


class FeedbackInput(serializers.Serializer):
    """The one validator of the /api/feedback body (the contract's messages)."""

    sessionId = SessionIdField(help_text="1-64 characters of A-Z a-z 0-9 . _ : -")
    feedback = FeedbackValueField()
    reason = ReasonField(
        required=False,
        allow_null=True,
        help_text="Optional: why the answer was not useful.",
    )
    comment = FreeTextField(
        "comment", COMMENT_MAX_LENGTH, help_text="Optional: the reader's words, up to 2,000."
    )
    correction = FreeTextField(
        "correction",
        CORRECTION_MAX_LENGTH,
        help_text=(
            "Optional: the right root cause or fix, as the reader knows it. The bad-case "
            "review can turn it into a case."
        ),
    )

    def run_validation(self, data: Any = serializers.empty) -> Any:
        # A list, a string or null is refused in the contract's words (DRF's own, for
        # null, cannot be reworded).
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": [NOT_A_JSON_OBJECT]})
        # A token in the body would be logged, cached and kept by whatever sees bodies:
        # it belongs in the Authorization header only.
        if any(key in data for key in TOKEN_BODY_KEYS):
            raise serializers.ValidationError({"non_field_errors": [CREDENTIAL_IN_BODY]})
        return super().run_validation(data)

    def details(self) -> dict[str, str]:
        """reason, comment and correction as given ("" for those left out)."""
        return {
            name: self.validated_data.get(name) or ""
            for name in ("reason", "comment", "correction")
        }

    def first_error(self) -> str:
        """The one message the contract's body has room for."""
        for field in (
            "non_field_errors",
            "sessionId",
            "feedback",
            "reason",
            "comment",
            "correction",
        ):
            if field in self.errors:
                return str(self.errors[field][0])
        return INVALID_FEEDBACK


class FeedbackResponse(serializers.Serializer):
    """Every response of /api/feedback, success or error, has this shape."""

    success = serializers.BooleanField()
    message = serializers.CharField()
    caseId = serializers.UUIDField(allow_null=True)


def feedback_body(*, success: bool, message: str, case_id: str | None = None) -> dict:
    # Key order is part of the contract.
    return {"success": success, "message": message, "caseId": case_id}
