"""Building OTLP requests for the /v1/traces tests with opentelemetry-proto's classes."""

import gzip
import os
import time
from typing import Any

from django.test import Client
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class CommittingClient(Client):
    """Runs the on-commit work (scoring) of each request, as a real commit would; set
    `capture` to pytest-django's django_capture_on_commit_callbacks."""

    capture = None

    def post(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with self.capture(execute=True):
            return super().post(*args, **kwargs)


def new_trace_id() -> bytes:
    return os.urandom(16)


def new_span_id() -> bytes:
    return os.urandom(8)


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, (list, tuple)):
        return AnyValue(array_value=ArrayValue(values=[any_value(v) for v in value]))
    return AnyValue(string_value=str(value))


def span(
    name: str,
    *,
    trace_id: bytes,
    span_id: bytes | None = None,
    parent: bytes = b"",
    attributes: dict[str, Any] | None = None,
    error: str | None = None,
    start_ns: int | None = None,
    duration_ms: int = 10,
) -> Span:
    start = start_ns or time.time_ns()
    result = Span(
        trace_id=trace_id,
        span_id=span_id or new_span_id(),
        parent_span_id=parent,
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=start,
        end_time_unix_nano=start + duration_ms * 1_000_000,
        attributes=[KeyValue(key=k, value=any_value(v)) for k, v in (attributes or {}).items()],
    )
    if error is not None:
        result.status.code = Status.STATUS_CODE_ERROR
        result.status.message = error
    return result


def export(*spans: Span) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=list(spans))])]
    )


def otlp_json(request: ExportTraceServiceRequest) -> dict:
    """The OTLP JSON form: opentelemetry-proto's JSON mapping with hex trace/span ids, as
    the OTLP specification says (the protobuf mapping would give base64)."""
    document = json_format.MessageToDict(request)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for item in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in item:
                        import base64

                        item[key] = base64.b64decode(item[key]).hex()
    return document


def agent_run(
    session_id: str, tool: dict[str, Any], *, error: str | None = None
) -> ExportTraceServiceRequest:
    """A run as OpenInference exports it for the OpenAI Agents SDK: an agent span naming
    the session `session_id`, and one span of the tool search_docs with the attributes
    `tool` (failed with `error`, when given)."""
    trace, root = new_trace_id(), new_span_id()
    return export(
        span(
            "Agent workflow",
            trace_id=trace,
            span_id=root,
            attributes={
                "openinference.span.kind": "AGENT",
                "session.id": session_id,
                "input.value": "order-service 报 504，怎么办？",
                "output.value": "扩容数据库连接池。",
            },
        ),
        span(
            "search_docs",
            trace_id=trace,
            parent=root,
            error=error,
            attributes={"tool.name": "search_docs", **tool},
        ),
    )


def post(
    client,
    request: ExportTraceServiceRequest | bytes,
    *,
    key: str | None,
    gzipped=False,
    content_type=PROTOBUF,
    **headers,
):  # type: ignore[no-untyped-def]
    body = request if isinstance(request, bytes) else request.SerializeToString()
    if gzipped:
        body = gzip.compress(body)
        headers["HTTP_CONTENT_ENCODING"] = "gzip"
    if key:
        headers["HTTP_AUTHORIZATION"] = f"Api-Key {key}"
    return client.post("/v1/traces", data=body, content_type=content_type, **headers)


def response_of(response) -> ExportTraceServiceResponse:  # type: ignore[no-untyped-def]
    if response["Content-Type"].startswith(JSON):
        return json_format.Parse(response.content, ExportTraceServiceResponse())
    return ExportTraceServiceResponse.FromString(response.content)


def kb_tool(trace_id: bytes, parent: bytes, **attributes: Any) -> Span:
    """A retrieval tool `kb` that found the exact match (L0), under `parent`."""
    return span(
        "execute_tool kb",
        trace_id=trace_id,
        parent=parent,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "kb",
            "diagnosis.tool.kind": "retrieval",
            "diagnosis.match_level": "L0",
            **attributes,
        },
    )


def stored_as_another_request_left_it(
    session, trace: bytes, *, name: str, role: str, parent: bytes = b"", answer: str = ""
):  # type: ignore[no-untyped-def]
    """A span another request stored in `session` (committed while this one ran): what
    two requests of one trace leave, which SQLite, one writer at a time, cannot interleave."""
    from django.utils import timezone

    from diagnosis.models import Span as StoredSpan

    now = timezone.now()
    return StoredSpan.objects.create(
        session=session,
        trace_id=trace.hex(),
        span_id=new_span_id().hex(),
        parent_span_id=parent.hex(),
        name=name,
        role=role,
        started_at=now,
        ended_at=now,
        attributes={
            "session.id": session.session_id,
            **({"output.value": answer} if answer else {}),
        },
    )
