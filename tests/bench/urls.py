"""The real URLs plus two bare views that measure what Django and the database cost alone.

- /bench/floor: one UPDATE by unique key on diagnosis_session, nothing else (no key
  check, no validation, no transaction): the floor every write endpoint is compared to.
- /bench/not-useful-floor: a `not_useful`'s write the plainest way: one conditional UPDATE
  by unique key (finished, not already not_useful) of the three columns the real path
  writes (no key check, no validation, no rate limit, no metrics).
- /bench/useful-floor: a first `useful` written the plainest way Django's documentation
  would: the session locked with select_for_update(), saved, its case created, in one
  atomic(), then whether an indexer runs read by one SELECT (no key check, no
  validation, no rate limit, no metrics).
- /bench/bulk: the same tool-invocation rows the ingest endpoint receives, stored with a
  bare bulk_create (no validation, no dedup, no session lock).

- /bench/otlp-floor: an OTLP protobuf body decoded and its rows bulk-inserted the plainest
  way: a session per trace, a span row per span, a tool-invocation row per tool span (no
  key check, no mapping rules, no redaction, no validation, no dedup, no lock, no scoring).

Both go through the same middleware and the same DRF request parsing as the real API.
"""

from datetime import timedelta

from django.db import transaction
from django.http import HttpResponse
from django.urls import path
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
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


class NotUsefulFloorView(APIView):
    schema = None
    authentication_classes: list = []
    permission_classes: list = []

    def post(self, request: Request) -> Response:
        # not_useful's writes the plainest way: one conditional UPDATE by unique key.
        now = timezone.now()
        updated = (
            DiagnosisSession.objects.filter(session_id=request.data["sessionId"])
            .exclude(status="RUNNING")
            .exclude(feedback="not_useful")
            .update(feedback="not_useful", feedback_at=now, updated_at=now)
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


def _attribute(value):  # type: ignore[no-untyped-def]
    which = value.WhichOneof("value")
    return getattr(value, which) if which in ("string_value", "int_value", "bool_value") else None


@csrf_exempt
def otlp_floor_view(request):  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from diagnosis.models import Span

    export = ExportTraceServiceRequest.FromString(request.body)
    sessions, spans, invocations = {}, [], []
    for resource in export.resource_spans:
        for scope in resource.scope_spans:
            for item in scope.spans:
                attributes = {a.key: _attribute(a.value) for a in item.attributes}
                trace_id = item.trace_id.hex()
                sessions[trace_id] = DiagnosisSession(session_id=trace_id, query="")
                started = datetime.fromtimestamp(item.start_time_unix_nano / 1e9, tz=UTC)
                ended = datetime.fromtimestamp(item.end_time_unix_nano / 1e9, tz=UTC)
                spans.append(
                    Span(
                        session_id=trace_id,
                        trace_id=trace_id,
                        span_id=item.span_id.hex(),
                        parent_span_id=item.parent_span_id.hex(),
                        name=item.name,
                        role="other",
                        started_at=started,
                        ended_at=ended,
                        attributes=attributes,
                        arguments=attributes.get("gen_ai.tool.call.arguments") or "",
                        result=attributes.get("gen_ai.tool.call.result") or "",
                    )
                )
                if "gen_ai.tool.name" in attributes:
                    invocations.append(
                        ToolInvocation(
                            session_id=trace_id,
                            invocation_id=item.span_id.hex(),
                            tool_name=attributes["gen_ai.tool.name"],
                            status="SUCCESS",
                            query=attributes.get("gen_ai.tool.call.arguments"),
                        )
                    )
    with transaction.atomic():
        DiagnosisSession.objects.bulk_create(sessions.values(), ignore_conflicts=True)
        Span.objects.bulk_create(spans)
        ToolInvocation.objects.bulk_create(invocations)
    return HttpResponse(b"", content_type="application/x-protobuf")


urlpatterns = [
    path("bench/otlp-floor", otlp_floor_view),
    path("bench/floor", FloorView.as_view()),
    path("bench/not-useful-floor", NotUsefulFloorView.as_view()),
    path("bench/useful-floor", UsefulFloorView.as_view()),
    path("bench/bulk/<str:session_id>", BulkFloorView.as_view()),
    *real_urlpatterns,
]
