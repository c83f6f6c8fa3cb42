"""The real URLs plus two bare views that measure what Django and the database cost alone.

- /bench/floor: one UPDATE by unique key on diagnosis_session, nothing else (no key
  check, no validation, no transaction): the floor every write endpoint is compared to.
- /bench/useful-floor: a first `useful` written the plainest way Django's documentation
  would: the session locked with select_for_update(), saved, its case created, in one
  atomic(), then whether an indexer runs read by one SELECT (no key check, no
  validation, no rate limit, no metrics).
- /bench/bulk: the same tool-invocation rows the ingest endpoint receives, stored with a
  bare bulk_create (no validation, no dedup, no session lock).

Both go through the same middleware and the same DRF request parsing as the real API.
"""

from datetime import timedelta

from django.db import transaction
from django.urls import path
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from caselibrary.models import CaseIndexState, CaseLibrary
from config.urls import handler404, handler500
from config.urls import urlpatterns as real_urlpatterns
from diagnosis.models import DiagnosisSession, ToolInvocation

__all__ = ["handler404", "handler500", "urlpatterns"]


class FloorView(APIView):
    schema = None  # not part of the API
    authentication_classes: list = []
    permission_classes: list = []

    def post(self, request: Request) -> Response:
        updated = DiagnosisSession.objects.filter(session_id=request.data["sessionId"]).update(
            updated_at=timezone.now()
        )
        return Response({"updated": updated})


class UsefulFloorView(APIView):
    schema = None
    authentication_classes: list = []
    permission_classes: list = []

    def post(self, request: Request) -> Response:
        with transaction.atomic():
            session = DiagnosisSession.objects.select_for_update().get(
                session_id=request.data["sessionId"]
            )
            session.feedback = "useful"
            session.feedback_at = timezone.now()
            session.save(update_fields=["feedback", "feedback_at", "updated_at"])
            case = CaseLibrary.objects.create(
                diagnosis_id=session.session_id,
                source_type="AUTO",
                title=session.query[:100],
                root_cause=session.answer,
                solution=session.answer,
            )
        # The indexer check every new case makes (the triggers marked it), the plainest way.
        CaseIndexState.objects.filter(
            id=1, building_since__gte=timezone.now() - timedelta(seconds=10)
        ).exists()
        return Response({"caseId": case.case_id})


class BulkFloorView(APIView):
    schema = None
    authentication_classes: list = []
    permission_classes: list = []

    def post(self, request: Request, session_id: str) -> Response:
        rows = [
            ToolInvocation(
                session_id=session_id,
                invocation_id=item.get("invocationId"),
                tool_name=item["toolName"],
                kind=item.get("kind", "retrieval"),
                status=item["status"],
                match_level=item.get("matchLevel"),
                hit_count=item.get("hitCount", 0),
                query=item.get("query"),
                error_message=item.get("errorMessage"),
                duration_ms=item.get("durationMs"),
            )
            for item in request.data
        ]
        ToolInvocation.objects.bulk_create(rows)
        return Response({"created": len(rows)}, status=201)


urlpatterns = [
    path("bench/floor", FloorView.as_view()),
    path("bench/useful-floor", UsefulFloorView.as_view()),
    path("bench/bulk/<str:session_id>", BulkFloorView.as_view()),
    *real_urlpatterns,
]
