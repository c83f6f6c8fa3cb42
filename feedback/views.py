"""POST /api/feedback: the contract's path, status codes and bodies, byte for byte."""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import set_rollback

from config.api import api_error_of
from config.logging import note_refusal, tag_request
from config.openapi import error_responses
from diagnosis.apikeys import ApiKeyAuthentication
from diagnosis.viewsets import ApiViewSet
from feedback import services
from feedback.body import FEEDBACK_BODY_SCHEMA, InvalidFeedbackBody, feedback_body_from
from feedback.serializers import FEEDBACK_RECORDED, FeedbackResponse, feedback_body
from feedback.throttling import FeedbackKeyThrottle
from feedback.tokens import (
    NO_CREDENTIAL,
    FeedbackAddressThrottle,
    FeedbackToken,
    FeedbackTokenAuthentication,
    FeedbackTokenThrottle,
    KeyOrTokenMayGiveFeedback,
    check_token_session,
)

MESSAGES = {
    "not_authenticated": NO_CREDENTIAL,
    "authentication_failed": NO_CREDENTIAL,
    "permission_denied": "该 API Key 无权提交反馈",
    "method_not_allowed": "只支持 POST 请求",
    "unsupported_media_type": "Content-Type 必须是 application/json",
    "parse_error": "请求体不是合法的 JSON",
    "throttled": "请求过于频繁，请稍后再试",
    "payload_too_large": "请求体过大",
    "service_unavailable": "服务暂不可用，请稍后重试",
}
# The contract's 400 for a body that is not a JSON object takes in one that is not
# declared as JSON. A compressed body (`unsupported_content_encoding`) stays 415, as on
# every /api/ endpoint: it may well hold a JSON object, sent in a form no endpoint reads.
_STATUS_OVERRIDES = {"unsupported_media_type": status.HTTP_400_BAD_REQUEST}


def contract_error(code: str, message: str | None = None) -> dict:
    """The contract's error body for `code` (also used for the errors answered outside
    DRF: 404, 413, 500, 503). The contract words some errors its own way (MESSAGES);
    the others keep the message they come with."""
    return feedback_body(success=False, message=MESSAGES.get(code, message or ""))


def feedback_exception_handler(exc: Exception, context: dict) -> Response | None:
    """Every error of this endpoint in the contract's shape; unknown errors re-raised."""
    error = api_error_of(exc)
    if error is None:
        return None
    set_rollback()
    body = contract_error(error.code, error.message)
    if error.status < 500:
        note_refusal(context["request"], body["message"])
    return Response(
        body,
        status=_STATUS_OVERRIDES.get(error.code, error.status),
        headers=error.headers,
    )


class FeedbackViewSet(ApiViewSet):
    """End users' verdict on an answer: useful (it becomes a case) or not_useful."""

    # A page sends `Authorization: Feedback <token>` (feedback/tokens.py), the agent's
    # back end its API key.
    authentication_classes = [FeedbackTokenAuthentication, ApiKeyAuthentication]
    permission_classes = [KeyOrTokenMayGiveFeedback]
    throttle_classes = [FeedbackKeyThrottle, FeedbackTokenThrottle, FeedbackAddressThrottle]

    def get_exception_handler(self) -> Any:
        return feedback_exception_handler

    @extend_schema(
        summary="Record useful / not_useful for a finished session",
        description=(
            "`useful` also adds the session to the case library (once: repeating it returns "
            "the same caseId). `not_useful` marks a bad case. The last value wins; "
            "`status` is never changed. Nothing is written on any error.\n\n"
            "Optional `reason`, `comment` (up to 2,000 characters) and `correction` are "
            "kept with each feedback as history, for the bad-case review.\n\n"
            "A browser sends `Authorization: Feedback <token>` (the `feedbackToken` of "
            "the session's `complete` response) instead of an API key: a token for "
            "another session, tampered or expired is 403; a token with an API key, or in "
            "the body, is 400.\n\n"
            "The contract fixes this endpoint's bodies, errors included: always "
            '`{"success", "message", "caseId"}`, with the contract\'s Chinese messages. '
            "(The other endpoints answer errors as "
            '`{"success": false, "message", "code", "errors"?}`.)'
        ),
        request={"application/json": FEEDBACK_BODY_SCHEMA},
        responses={
            200: OpenApiResponse(FeedbackResponse, description="反馈已记录"),
            # 405 (with Allow) and 503 (with Retry-After) as on every POST operation:
            # config.openapi's hook, in this endpoint's shape.
            **error_responses(400, 401, 403, 404, 409, 413, 429, serializer=FeedbackResponse),
            415: OpenApiResponse(
                FeedbackResponse,
                description=(
                    "A compressed body (`Content-Encoding`): send it uncompressed. (A body "
                    "whose Content-Type is not application/json is 400, as the contract has "
                    "it.) Nothing was written."
                ),
            ),
        },
    )
    def create(self, request: Request) -> Response:
        try:
            # An empty body is no JSON object (DRF reads one as an empty dict).
            body = feedback_body_from(request.data if request.stream is not None else None)
        except InvalidFeedbackBody as problem:
            note_refusal(request, str(problem))
            return Response(
                feedback_body(success=False, message=str(problem)),
                status=status.HTTP_400_BAD_REQUEST,
            )
        check_token_session(request, body.session_id)
        tag_request(body.session_id)
        result = services.feedback_submit(
            session_id=body.session_id,
            feedback=body.feedback,
            with_token=isinstance(request.auth, FeedbackToken),
            **body.details(),
        )
        return Response(
            feedback_body(success=True, message=FEEDBACK_RECORDED, case_id=result.case_id)
        )
