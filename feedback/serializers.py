"""The /api/feedback response body (the request body's validator is feedback/body.py)."""

from rest_framework import serializers

FEEDBACK_RECORDED = "反馈已记录"


class FeedbackResponse(serializers.Serializer):
    """Every response of /api/feedback, success or error, has this shape."""

    success = serializers.BooleanField()
    message = serializers.CharField()
    caseId = serializers.UUIDField(allow_null=True)


def feedback_body(*, success: bool, message: str, case_id: str | None = None) -> dict:
    # Key order is part of the contract.
    return {"success": success, "message": message, "caseId": case_id}
