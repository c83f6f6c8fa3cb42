"""Ingest and read API for sessions: thin views over diagnosis/services.py and selectors."""

import re
from typing import Any

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

from caselibrary.selectors import session_duplicate_recalls
from config.api import NewestFirstCursorPagination, validated
from config.openapi import error_responses
from config.viewsets import ApiViewSet
from diagnosis import selectors, services
from diagnosis.models import (
    SESSION_ID_REGEX,
    ApiPermission,
    InvocationStatus,
    MatchLevel,
    ToolKind,
    match_level_problem,
)
from diagnosis.serializers import (
    INT_MAX,
    SESSION_ID_HELP,
    RecordedInvocationsOutput,
    SessionCompleteInput,
    SessionDetailOutput,
    SessionListFilters,
    SessionOutput,
    SessionStartInput,
    ToolInvocationInput,
)

_SESSION_ID = re.compile(SESSION_ID_REGEX)

SESSION_ID_PARAMETER = OpenApiParameter(
    "sessionId",
    str,
    OpenApiParameter.PATH,
    description=SESSION_ID_HELP,
    pattern=r"^[A-Za-z0-9._:-]{1,64}$",
)


def checked_session_id(value: str) -> str:
    if not _SESSION_ID.match(value):
        raise serializers.ValidationError({"sessionId": [f"A sessionId is {SESSION_ID_HELP}."]})
    return value


class SessionViewSet(ApiViewSet):
    """Agents report sessions, their tool-invocation facts and answers, and read them back."""

    pagination_class = NewestFirstCursorPagination
    lookup_field = "session_id"
    lookup_url_kwarg = "sessionId"
    lookup_value_regex = "[^/]+"
    required_permission = {
        "create": ApiPermission.INGEST,
        "tool_invocations": ApiPermission.INGEST,
        "complete": ApiPermission.INGEST,
        "retrieve": ApiPermission.READ,
        "list": ApiPermission.READ,
    }

    @extend_schema(
        summary="Start a session",
        request=SessionStartInput,
        responses={201: SessionOutput, **error_responses(400, 401, 403, 409, 413, 415)},
    )
    def create(self, request: Request) -> Response:
        data = validated(SessionStartInput, request.data)
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
        responses={200: SessionDetailOutput, **error_responses(400, 401, 403, 404)},
    )
    def retrieve(self, request: Request, sessionId: str) -> Response:
        session = selectors.session_get(session_id=checked_session_id(sessionId))
        session.invocations = list(selectors.session_invocations(session_id=session.session_id))
        session.duplicate_recalls = session_duplicate_recalls(session_id=session.session_id)
        return Response(SessionDetailOutput(session).data)

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
            **error_responses(400, 401, 403, 404, 409, 413, 415),
        },
    )
    @action(detail=True, methods=["post"], url_path="tool-invocations")
    def tool_invocations(self, request: Request, sessionId: str) -> Response:
        session_id = checked_session_id(sessionId)
        body = request.data
        items = body if isinstance(body, list) else [body]
        if not items:
            raise serializers.ValidationError({"body": ["Send at least one tool invocation."]})
        if len(items) > services.MAX_INVOCATIONS_PER_BATCH:
            raise serializers.ValidationError(
                {"body": [f"At most {services.MAX_INVOCATIONS_PER_BATCH} tool invocations."]}
            )
        if not all(isinstance(item, dict) for item in items):
            raise serializers.ValidationError(
                {"body": ["Expected a JSON object or a list of JSON objects."]}
            )
        invocations = _plain_invocations(items)
        if invocations is None:
            serializer = ToolInvocationInput(data=items, many=True)
            if not serializer.is_valid():
                errors = serializer.errors if isinstance(body, list) else serializer.errors[0]
                raise serializers.ValidationError(errors)
            invocations = [
                ToolInvocationInput.to_service(item) for item in serializer.validated_data
            ]
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
                SessionOutput, description="Completed now, or the same completion repeated."
            ),
            **error_responses(400, 401, 403, 404, 409, 413, 415),
        },
    )
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, sessionId: str) -> Response:
        session_id = checked_session_id(sessionId)
        data = validated(SessionCompleteInput, request.data)
        services.session_complete(
            session_id=session_id, status=data["status"], answer=data.get("answer")
        )
        return Response(SessionOutput(selectors.session_get(session_id=session_id)).data)


_INVOCATION_KEYS = frozenset(ToolInvocationInput().fields)
_KINDS = frozenset(ToolKind.values)
_OUTCOMES = frozenset(InvocationStatus.values)
_LEVELS = frozenset(MatchLevel.values)


def _plain_invocations(items: list[dict]) -> list[dict[str, Any]] | None:
    """The service's arguments for a batch every item of which is plainly valid; None
    when any item needs ToolInvocationInput (to be refused with its exact errors, or
    normalised: trimmed strings and the like).

    The serializer costs several times what storing the rows does, and agents send
    batches of hundreds; a well-formed item is checked here in a few comparisons. What
    passes is exactly what the serializer would return unchanged.
    """
    out = []
    for item in items:
        if not item.keys() <= _INVOCATION_KEYS:
            return None
        tool_name = item.get("toolName")
        invocation_id = item.get("invocationId")
        kind = item.get("kind", ToolKind.RETRIEVAL.value)  # the plain str, as JSON gives
        status = item.get("status")
        level = item.get("matchLevel")
        hits = item.get("hitCount", 0)
        duration = item.get("durationMs")
        query = item.get("query")
        error = item.get("errorMessage")
        if not (
            _plain_text(tool_name, 128, blank=False)
            and (invocation_id is None or _plain_text(invocation_id, 64, blank=False))
            and type(kind) is str
            and kind in _KINDS
            and type(status) is str
            and status in _OUTCOMES
            and (level is None or (type(level) is str and level in _LEVELS))
            and match_level_problem(status=status, kind=kind, match_level=level) is None
            and type(hits) is int
            and 0 <= hits <= INT_MAX
            and (duration is None or (type(duration) is int and 0 <= duration <= INT_MAX))
            and (query is None or _plain_text(query))
            and (error is None or _plain_text(error))
        ):
            return None
        out.append(
            {
                "invocation_id": invocation_id,
                "tool_name": tool_name,
                "kind": kind,
                "status": status,
                "match_level": level,
                "hit_count": hits,
                "query": query,
                "error_message": error,
                "duration_ms": duration,
            }
        )
    return out


def _plain_text(value: object, max_length: int | None = None, *, blank: bool = True) -> bool:
    """A string the serializer's CharField would keep as it is."""
    if type(value) is not str:
        return False
    if max_length is not None and len(value) > max_length:
        return False
    if not value:
        return blank
    if value != value.strip() or "\x00" in value:
        return False
    try:
        value.encode("utf-8")  # no unpaired surrogates
    except UnicodeEncodeError:
        return False
    return True
