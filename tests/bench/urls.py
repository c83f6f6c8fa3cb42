"""The real URLs plus two bare views that measure what Django and the database cost alone.

- /bench/floor: one UPDATE by unique key on diagnosis_session, nothing else (no key
  check, no validation, no transaction): the floor every write endpoint is compared to.
- /bench/bulk: the same tool-invocation rows the ingest endpoint receives, stored with a
  bare bulk_create (no validation, no dedup, no session lock).

Both go through the same middleware and the same DRF request parsing as the real API.
"""

from django.urls import path
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

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
    path("bench/bulk/<str:session_id>", BulkFloorView.as_view()),
    *real_urlpatterns,
]
