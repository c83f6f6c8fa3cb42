"""POST /api/feedback: the contract's path, status codes and bodies, byte for byte."""

import re
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import set_rollback

from config.api import DomainError, plainly_valid
from config.logging import tag_request
from config.openapi import error_responses
from diagnosis.models import SESSION_ID_REGEX, ApiPermission, Feedback
from diagnosis.viewsets import ApiViewSet
from feedback import services
from feedback.serializers import FEEDBACK_RECORDED, FeedbackInput, FeedbackResponse, feedback_body
from feedback.throttling import FeedbackKeyThrottle

_SESSION_ID = re.compile(SESSION_ID_REGEX)
_FEEDBACK_VALUES = frozenset(Feedback.values)


MESSAGES = {
    "not_authenticated": "缺少或无效的 API Key",
    "authentication_failed": "缺少或无效的 API Key",
    "permission_denied": "该 API Key 无权提交反馈",
    "method_not_allowed": "只支持 POST 请求",
    "unsupported_media_type": "Content-Type 必须是 application/json",
    "parse_error": "请求体不是合法的 JSON",
    "not_a_json_object": "请求体必须是 JSON 对象",
    "throttled": "请求过于频繁，请稍后再试",
    "payload_too_large": "请求体过大",
    "service_unavailable": "服务暂不可用，请稍后重试",
}
# The contract has no 415: a body that is not declared as JSON is not a JSON object.
_STATUS_OVERRIDES = {"unsupported_media_type": status.HTTP_400_BAD_REQUEST}


def contract_error(code: str, message: str | None = None) -> dict:
    """The contract's error body for `code` (also used by middleware for 413/503)."""
    return feedback_body(success=False, message=MESSAGES.get(code, message or ""))


def feedback_exception_handler(exc: Exception, context: dict) -> Response | None:
    """Every error of this endpoint in the contract's shape; unknown errors re-raised."""
    if isinstance(exc, DomainError):
        set_rollback()
        return Response(feedback_body(success=False, message=exc.message), status=exc.status_code)
    if not isinstance(exc, exceptions.APIException):
        return None
    set_rollback()
    code = exc.get_codes() if isinstance(exc.get_codes(), str) else "invalid"
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))
    message = MESSAGES.get(code) or str(exc.detail)
    return Response(
        feedback_body(success=False, message=message),
        status=_STATUS_OVERRIDES.get(code, exc.status_code),
        headers=headers,
    )


class FeedbackViewSet(ApiViewSet):
    """End users' verdict on an answer: useful (it becomes a case) or not_useful."""

    required_permission = ApiPermission.FEEDBACK
    throttle_classes = [FeedbackKeyThrottle]

    def get_exception_handler(self) -> Any:
        return feedback_exception_handler

    @extend_schema(
        summary="Record useful / not_useful for a finished session",
        description=(
            "`useful` also adds the session to the case library (once: repeating it returns "
            "the same caseId). `not_useful` marks a bad case. The last value wins; "
            "`status` is never changed. Nothing is written on any error."
        ),
        request=FeedbackInput,
        responses={
            200: OpenApiResponse(FeedbackResponse, description="反馈已记录"),
            **error_responses(
                400, 401, 403, 404, 405, 409, 413, 429, 503, serializer=FeedbackResponse
            ),
        },
    )
    def create(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            return Response(contract_error("not_a_json_object"), status=status.HTTP_400_BAD_REQUEST)
        data = plainly_valid(FeedbackInput, request.data)
        if data is None:
            # Not plainly valid: the serializer refuses it with the exact message (or
            # accepts it after all).
            serializer = FeedbackInput(data=request.data)
            if not serializer.is_valid():
                return Response(
                    feedback_body(success=False, message=serializer.first_error()),
                    status=status.HTTP_400_BAD_REQUEST,
                )
            data = serializer.validated_data
        session_id, feedback = data["sessionId"], data["feedback"]
        tag_request(session_id)
        result = services.feedback_submit(session_id=session_id, feedback=feedback)
        return Response(
            feedback_body(success=True, message=FEEDBACK_RECORDED, case_id=result.case_id)
        )
