"""API over the case library: read, search, and (curator keys) add MANUAL cases."""

import uuid

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from caselibrary import selectors
from caselibrary.case_input import CaseCreateInput, in_json_names
from caselibrary.models import GENERAL_CATEGORY
from caselibrary.serializers import CaseOutput, CaseSearchInput, CaseSearchOutput
from caselibrary.services.cases import case_create_manual
from caselibrary.services.search import case_search
from config.api import NewestFirstCursorPagination, PageParameters, validated
from config.logging import tag_request
from config.openapi import error_responses
from diagnosis.models import ApiPermission
from diagnosis.viewsets import ApiViewSet


class CasePagination(NewestFirstCursorPagination):
    # Both columns descending: the created_at index, read backwards, gives the order (with
    # case_id ascending MariaDB sorted the whole library for every page: 9.7 s at 154k).
    ordering = ("-created_at", "-case_id")
    long_fields = ("root_cause", "solution")


class CaseViewSet(ApiViewSet):
    """The curated case library, read-only."""

    lookup_field = "case_id"
    lookup_url_kwarg = "caseId"
    lookup_value_regex = "[^/]+"
    required_permission = {
        "list": ApiPermission.READ,
        "retrieve": ApiPermission.READ,
        "search": ApiPermission.INGEST,
        "create": ApiPermission.CURATE,
    }
    pagination_class = CasePagination

    @extend_schema(
        summary="The case library, newest first",
        description=(
            "A case merged into another (a near-duplicate, merged in the admin) is left out: "
            "it is found through the case it was merged into, and still read by its id, "
            "where `mergedInto` names that case."
        ),
        responses={200: CaseOutput(many=True), **error_responses(400, 401, 403)},
    )
    def list(self, request: Request) -> Response:
        PageParameters(data=request.query_params.dict()).is_valid(raise_exception=True)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.case_list(), request, view=self)
        return paginator.get_paginated_response(CaseOutput(page, many=True).data)

    @extend_schema(
        summary="Add a MANUAL case (a key of the curator scope)",
        request=CaseCreateInput,
        responses={201: CaseOutput, **error_responses(400, 401, 403, 404, 409, 413, 415)},
    )
    def create(self, request: Request) -> Response:
        data = validated(CaseCreateInput, request.data)
        try:
            case = case_create_manual(
                created_by=f"api:{request.auth.name}"[:64],
                title=data["title"],
                root_cause=data["rootCause"],
                solution=data["solution"],
                fault_category=data.get("faultCategory") or GENERAL_CATEGORY,
                error_code=data.get("errorCode"),
                diagnosis_id=data.get("sessionId"),
            )
        except DjangoValidationError as exc:
            raise in_json_names(exc) from None
        return Response(CaseOutput(case).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="One case",
        description="A case merged into another too: `mergedInto` names the case kept.",
        parameters=[OpenApiParameter("caseId", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        responses={200: CaseOutput, **error_responses(401, 403, 404)},
    )
    def retrieve(self, request: Request, caseId: str) -> Response:
        try:
            case_id = str(uuid.UUID(caseId))
        except ValueError:
            raise selectors.CaseNotFound(caseId) from None
        return Response(CaseOutput(selectors.case_get(case_id=case_id)).data)

    @extend_schema(
        summary="Have we seen this before? Search the case library (L0 exact, L1 similar)",
        description=(
            "L0: an error code in the query (or `errorCode`) equals a case's error code, or "
            "the query is a case's title. L1: similar wording in title, root cause and "
            "solution. With `sessionId` (a RUNNING session) the search is recorded as its "
            "`CaseLibrarySearch` tool invocation, so the hit counts in the session's evidence "
            "score, and a repeated recall in the same session is flagged. With `explain: "
            "true` each hit carries `explain` (its lexical and dense ranks, its figures and "
            "the passage that matched) and the response its own `explain` (the decision's "
            "bars, the nearest similar case); without it neither is present."
        ),
        request=CaseSearchInput,
        responses={200: CaseSearchOutput, **error_responses(400, 401, 403, 404, 409, 413, 415)},
    )
    @action(detail=False, methods=["post"])
    def search(self, request: Request) -> Response:
        data = validated(CaseSearchInput, request.data)
        if "sessionId" in data:
            tag_request(data["sessionId"])
        outcome = case_search(
            query=data["query"],
            error_code=data.get("errorCode"),
            limit=data["limit"],
            session_id=data.get("sessionId"),
            explain=data["explain"],
        )
        return Response(CaseSearchOutput(outcome).data)
