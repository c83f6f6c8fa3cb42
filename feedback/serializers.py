"""The /api/feedback body. Messages are the contract's (Chinese), one per problem."""

from typing import Any

from rest_framework import serializers

from diagnosis.models import SESSION_ID_MAX_LENGTH, SESSION_ID_REGEX, Feedback

FEEDBACK_RECORDED = "反馈已记录"
ALLOWED_FEEDBACK = ", ".join(Feedback.values)
INVALID_FEEDBACK = f"feedback 取值无效，允许的值：{ALLOWED_FEEDBACK}"
NOT_A_JSON_OBJECT = "请求体必须是 JSON 对象"


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


class FeedbackInput(serializers.Serializer):
    """The one validator of the /api/feedback body (the contract's messages)."""

    sessionId = SessionIdField(help_text="1-64 characters of A-Z a-z 0-9 . _ : -")
    feedback = FeedbackValueField()

    def run_validation(self, data: Any = serializers.empty) -> Any:
        # A list, a string or null is refused in the contract's words (DRF's own, for
        # null, cannot be reworded).
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": [NOT_A_JSON_OBJECT]})
        return super().run_validation(data)

    def first_error(self) -> str:
        """The one message the contract's body has room for."""
        for field in ("non_field_errors", "sessionId", "feedback"):
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
