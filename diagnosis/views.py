"""Ingest and read API for sessions: thin views over diagnosis/services.py and selectors."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import ErrorSerializer, NewestFirstCursorPagination, validated
from config.logging import tag_request
from config.openapi import error_responses
from diagnosis import selectors, services
from diagnosis.apikeys import HasApiPermission
from diagnosis.feedback_tokens import feedback_token_issue
from diagnosis.models import SESSION_ID_PATTERN, SESSION_ID_SCHEMA_PATTERN, ApiPermission
from diagnosis.serializers import (
    SESSION_ID_HELP,
    SESSION_ID_INVALID,
    FeedbackTokenOutput,
    RecordedInvocationsOutput,
    SessionCompletedOutput,
    SessionCompleteInput,
    SessionDetailWithTokenOutput,
    SessionListFilters,
    SessionOutput,
    SessionStartInput,
    ToolInvocationInput,
    tool_invocations_checked,
)
from diagnosis.viewsets import ApiViewSet

SESSION_ID_PARAMETER = OpenApiParameter(
    "sessionId",
    str,
    OpenApiParameter.PATH,
    description=SESSION_ID_HELP,
    pattern=SESSION_ID_SCHEMA_PATTERN,
)


def checked_session_id(value: str) -> str:
    if not SESSION_ID_PATTERN.match(value):
        raise serializers.ValidationError({"sessionId": [SESSION_ID_INVALID]})
    return value


class SessionPagination(NewestFirstCursorPagination):
    long_fields = ("query", "answer")


class MayHaveFeedbackTokens(HasApiPermission):
    """A key that may send feedback (its action's permission), or one that is handed
    feedback tokens with its sessions already (a key that may ingest)."""

    def has_permission(self, request: Request, view: object) -> bool:
        return super().has_permission(request, view) or request.auth.allows(ApiPermission.INGEST)


class SessionViewSet(ApiViewSet):
    """Agents report sessions, their tool-invocation facts and answers, and read them back."""

    pagination_class = SessionPagination
    lookup_field = "session_id"
    lookup_url_kwarg = "sessionId"
    lookup_value_regex = "[^/]+"
    required_permission = {
        "create": ApiPermission.INGEST,
        "tool_invocations": ApiPermission.INGEST,
        "complete": ApiPermission.INGEST,
        "retrieve": ApiPermission.READ,
        "list": ApiPermission.READ,
        # Or INGEST: the action's guard is MayHaveFeedbackTokens.
        "feedback_token": ApiPermission.FEEDBACK,
    }

    @extend_schema(
        summary="Start a session",
        request=SessionStartInput,
        responses={201: SessionOutput, **error_responses(400, 401, 403, 409, 413)},
    )
    def create(self, request: Request) -> Response:
        data = validated(SessionStartInput, request.data)
        if "sessionId" in data:
            # Django's line for a refusal (409: the id exists) names the session too.
            tag_request(data["sessionId"])
        session = services.session_start(
            session_id=data.get("sessionId"), query=data["query"], user_id=data.get("userId")
        )
        session.linked_case_id = None
        return Response(SessionOutput(session).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="List sessions, newest first",
        parameters=[
            OpenApiParameter("status", str, enum=["RUNNING", "SUCCESS", "FAILED"]),
            OpenApiParameter(
                "feedback",
                str,
                enum=["useful", "not_useful", "none"],
                description="none: no feedback yet",
            ),
            OpenApiParameter("createdAfter", OpenApiTypes.DATETIME, description="inclusive"),
            OpenApiParameter("createdBefore", OpenApiTypes.DATETIME, description="exclusive"),
        ],
        responses={200: SessionOutput(many=True), **error_responses(400, 401, 403)},
    )
    def list(self, request: Request) -> Response:
        filters = SessionListFilters(data=request.query_params.dict())
        filters.is_valid(raise_exception=True)
        f = filters.validated_data
        queryset = selectors.session_list(
            status=f.get("status"),
            feedback=f.get("feedback"),
            created_after=f.get("createdAfter"),
            created_before=f.get("createdBefore"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(SessionOutput(page, many=True).data)

    @extend_schema(
        summary="A session with its score, feedback, case and tool invocations",
        parameters=[SESSION_ID_PARAMETER],
        responses={200: SessionDetailWithTokenOutput, **error_responses(400, 401, 403, 404)},
    )
    def retrieve(self, request: Request, sessionId: str) -> Response:
        session = selectors.session_get(session_id=checked_session_id(sessionId))
        session.invocations = list(selectors.session_invocations(session_id=session.session_id))
        session.duplicate_recalls = selectors.session_duplicate_recalls(session=session)
        return Response(
            SessionDetailWithTokenOutput(session, context=self._token_context(request)).data
        )

    @extend_schema(
        summary="Record tool invocations (one object or a list of up to 500)",
        parameters=[SESSION_ID_PARAMETER],
        request=PolymorphicProxySerializer(
            component_name="ToolInvocationsBody",
            serializers=[ToolInvocationInput, ToolInvocationInput(many=True)],
            resource_type_field_name=None,
            many=False,
        ),
        responses={
            201: OpenApiResponse(RecordedInvocationsOutput, description="Something was stored."),
            200: OpenApiResponse(
                RecordedInvocationsOutput, description="Nothing new: every invocationId was stored."
            ),
            **error_responses(400, 401, 403, 404, 413),
            409: OpenApiResponse(
                ErrorSerializer,
                description=(
                    "The session is finished (`conflict`), or an invocationId was sent again "
                    "with other facts than it was first stored (or sent in the batch) with "
                    "(`invocation_conflict`; the message names it). Nothing of the batch was "
                    "written."
                ),
            ),
        },
    )
    @action(detail=True, methods=["post"], url_path="tool-invocations")
    def tool_invocations(self, request: Request, sessionId: str) -> Response:
        session_id = checked_session_id(sessionId)
        invocations = tool_invocations_checked(request.data)
        recorded = services.invocations_record(session_id=session_id, invocations=invocations)
        output = RecordedInvocationsOutput(
            {
                "sessionId": session_id,
                "received": recorded.received,
                "created": recorded.created,
                "duplicates": recorded.duplicates,
            }
        )
        code = status.HTTP_201_CREATED if recorded.created else status.HTTP_200_OK
        return Response(output.data, status=code)

    @extend_schema(
        summary="Complete a session: RUNNING -> SUCCESS (with the answer) or FAILED, once",
        parameters=[SESSION_ID_PARAMETER],
        request=SessionCompleteInput,
        responses={
            200: OpenApiResponse(
                SessionCompletedOutput,
                description=(
                    "Completed now, or the same completion repeated. `feedbackToken` lets "
                    "the page that shows the answer send the reader's feedback."
                ),
            ),
            **error_responses(400, 401, 403, 404, 409, 413),
        },
    )
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, sessionId: str) -> Response:
        session_id = checked_session_id(sessionId)
        data = validated(SessionCompleteInput, request.data)
        services.session_complete(
            session_id=session_id, status=data["status"], answer=data.get("answer")
        )
        session = selectors.session_get(session_id=session_id)
        return Response(SessionCompletedOutput(session, context=self._token_context(request)).data)

    @extend_schema(
        summary="A fresh feedback token for a session, for a page whose token expired",
        description=(
            "For the chat front end's back end: its `frontend` key may send feedback but "
            "not read sessions, so it cannot read a new `feedbackToken` from the session. "
            "Keys of the `agent` and `full` scopes may call it too. Any existing session "
            "gets one; POST /api/feedback still refuses feedback on a session that cannot "
            "take it (409). No body."
        ),
        parameters=[SESSION_ID_PARAMETER],
        request=None,
        responses={200: FeedbackTokenOutput, **error_responses(400, 401, 403, 404, 413)},
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="feedback-token",
        permission_classes=[MayHaveFeedbackTokens],
    )
    def feedback_token(self, request: Request, sessionId: str) -> Response:
        issued = feedback_token_issue(session_id=checked_session_id(sessionId))
        return Response(FeedbackTokenOutput(issued).data)

    @staticmethod
    def _token_context(request: Request) -> dict:
        # Only the agent's back end (a key that may ingest) is handed feedback tokens.
        return {"with_feedback_token": request.auth.allows(ApiPermission.INGEST)}
