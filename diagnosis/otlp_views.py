"""POST /v1/traces: OTLP/HTTP trace ingest.

A plain Django view, not DRF: the body is protobuf or OTLP JSON and every answer is in
the request's encoding (ExportTraceServiceResponse, or google.rpc.Status for an error),
as the OTLP specification says. Authentication is the API's: `Authorization: Api-Key
<key>` (OTEL_EXPORTER_OTLP_HEADERS="Authorization=Api-Key <key>"), a key whose scope
allows ingest.
"""

import logging
import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions

from config.logging import note_refusal
from config.middleware import outage_answered, outage_kind
from config.throttling import WindowCountThrottle
from diagnosis import otlp_wire
from diagnosis.apikeys import KEYWORD, ApiKeyAuthentication
from diagnosis.models import ApiKey, ApiPermission
from diagnosis.otlp_lenient import Note
from diagnosis.otlp_limits import Limits
from diagnosis.otlp_mapping import span_count, spans_read
from diagnosis.otlp_races import RACE_ATTEMPTS, lost_a_race, race_named
from diagnosis.otlp_services import IngestResult, traces_ingest
from diagnosis.otlp_wire import Encoding, WireError
from diagnosis.redaction import Redactor, redactor
from diagnosis.text import without_bidi_controls

logger = logging.getLogger(__name__)

# Exporters retry 429 and 503 after this many seconds (when the limiter says none).
RETRY_AFTER_SECONDS = 5

# Outages the exporter retries (config.middleware.outage_kind) are caught here, not left to
# config.middleware (which answers them in plain text outside /api/), because exporters
# read an error's google.rpc.Status; so are races lost at every attempt.


class OtlpKeyThrottle(WindowCountThrottle):
    """Per API key, counted in the configured cache (see feedback/throttling.py)."""

    scope = "otlp"

    def get_rate(self) -> str | None:
        return settings.OTLP_RATE_LIMIT

    def get_cache_key(self, request: HttpRequest, view: object) -> str | None:
        api_key = getattr(request, "auth", None)
        if not isinstance(api_key, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": api_key.prefix}


@csrf_exempt
def traces_view(request: HttpRequest) -> HttpResponse:
    try:
        return _traces(request)
    except Exception as exc:
        if lost_a_race(exc):
            # Requests writing the same traces won every attempt (diagnosis.otlp_races):
            # the database answers, its connections are sound; the exporter sends the
            # batch again.
            logger.warning(
                "answered 503: lost a race at each of its %d attempts to requests writing "
                "the same traces at the same time: %s",
                RACE_ATTEMPTS,
                race_named(exc),
            )
            # Django's own "Service Unavailable" line for it, an ERROR, is dropped as for
            # an outage answered (config.logging.AnsweredOutageFilter): the line above
            # says why.
            request.outage = "race"  # type: ignore[attr-defined]
            return _unavailable(request)
        what = outage_kind(exc)
        if what is None:
            # Any other error, one about the data too (an IntegrityError or DataError:
            # MariaDB's CHECK on a JSON column, 4025), is Django's 500 with its traceback,
            # as every error of ours here: the same batch fails again however often it is
            # sent, so it is no outage to retry (exporters retry 429, 502, 503 and 504,
            # not 500), and not a 400 either, since what the database refused is what the
            # mapping made of the spans.
            raise
        # Logged once a minute, as the API's outages are; the exporter retries.
        outage_answered(request, what, exc)
        return _unavailable(request)


@csrf_exempt
def otlp_not_found(request: HttpRequest) -> HttpResponse:
    """404 as a google.rpc.Status in the request's encoding (JSON when it is neither), on
    the OTLP paths that take no traces: `/v1/traces/`, and `/v1/metrics` and `/v1/logs`,
    where an exporter pointed at the service's base (OTEL_EXPORTER_OTLP_ENDPOINT) sends
    its other signals. It reads no body and asks no key."""
    try:
        encoding = otlp_wire.encoding_of(request.content_type or "")
    except WireError:
        encoding = None
    path = request.path.rstrip("/")
    if path == "/v1/traces":
        message = "OTLP trace 的地址是 /v1/traces（不带末尾的斜杠）"
    else:
        signal = path.rsplit("/", 1)[-1]
        message = f"此服务只接收 trace（POST /v1/traces），不接收 {signal}"
    return _error(request, encoding, 404, message)


def _unavailable(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After, which exporters retry, in the request's encoding."""
    encoding = getattr(request, "otlp_encoding", None)
    response = _error(request, encoding, 503, "服务暂不可用，请稍后重试")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _traces(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        response = _error(request, None, 405, "只接受 POST")
        response["Allow"] = "POST"
        return response
    # Known first, so that every answer (a refused key too) is in the request's encoding.
    encoding, unsupported = None, None
    try:
        encoding = otlp_wire.encoding_of(request.content_type or "")
    except WireError as error:
        unsupported = error
    request.otlp_encoding = encoding  # type: ignore[attr-defined]
    try:
        _authorize(request)
        if unsupported is not None:
            raise unsupported
        throttle = OtlpKeyThrottle()
        if not throttle.allow_request(request, None):  # type: ignore[arg-type]
            response = _error(request, encoding, 429, "请求过于频繁，请稍后再试")
            response["Retry-After"] = str(int(throttle.wait() or RETRY_AFTER_SECONDS) or 1)
            return response
        body = otlp_wire.body_read(
            request,
            content_encoding=request.headers.get("Content-Encoding", ""),
            declared_length=_declared_length(request),
            limit=settings.OTLP_MAX_BODY_BYTES,
        )
        limits = Limits(
            attributes=settings.OTLP_MAX_ATTRIBUTES_PER_SPAN,
            events=settings.OTLP_MAX_EVENTS_PER_SPAN,
            total=settings.OTLP_MAX_ATTRIBUTES_PER_REQUEST,
        )
        decoded = otlp_wire.request_decoded(body, encoding, limits)
        export = decoded.request
        count = span_count(export)
        if count > settings.OTLP_MAX_SPANS:
            raise WireError(
                413,
                f"一次最多 {settings.OTLP_MAX_SPANS} 个 span（收到 {count} 个）："
                "请调小导出批量（OTEL_BSP_MAX_EXPORT_BATCH_SIZE）",
            )
    except WireError as error:
        return _error(request, encoding, error.status, error.message)
    read = spans_read(
        export, redact=_stored(redactor()), max_chars=settings.OTLP_MAX_ATTRIBUTE_CHARS
    )
    result = traces_ingest(records=read.records, rejected=[*decoded.lost, *read.rejected])
    _notes_logged(decoded, result)
    stored, not_stored = _notes_parted(decoded.notes, result.kept)
    message = _answer_message(result.rejected, stored + result.notes, not_stored)
    # Spans stored with a note are not rejected: rejected_spans counts the spans lost, and
    # a message with none lost is a warning (OTLP: partial_success, rejected_spans 0).
    body = otlp_wire.response_body(encoding, rejected=len(result.rejected), message=message)
    return HttpResponse(body, content_type=encoding.content_type)


def _stored(redact: Redactor) -> Callable[[str], str]:
    """Each text a span carries (an attribute's, its name, its error message) as it is
    stored: without bidirectional controls, as every free text is (diagnosis.text), taken
    out before the redaction's patterns read it; then redacted."""
    return lambda text: redact(without_bidi_controls(text))


def _authorize(request: HttpRequest) -> None:
    if not request.META.get("HTTP_AUTHORIZATION"):
        raise WireError(401, f"缺少请求头 'Authorization: {KEYWORD} <key>'")
    try:
        authenticated = ApiKeyAuthentication().authenticate(request)  # type: ignore[arg-type]
    except exceptions.AuthenticationFailed as exc:
        raise WireError(401, str(exc.detail)) from None
    if authenticated is None:
        raise WireError(401, "缺少或无效的 API Key")
    api_key = authenticated[1]
    if not api_key.allows(ApiPermission.INGEST):
        raise WireError(403, "该 API Key 的权限范围不允许上报数据")
    request.auth = api_key  # type: ignore[attr-defined]


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


# How many of a request's notes its one log line shows (the answer lists them all).
_NOTES_LOGGED = 5


def _notes_logged(decoded: otlp_wire.Decoded, result: IngestResult) -> None:
    """A request's notes in one WARNING, however many there are: how many, the first few
    of each kind (about the body as read: text not UTF-8, fields not readable; about the
    spans stored: hints ignored, ...), and the ids of the first span they are about."""
    body = [text for _, text in decoded.notes] + decoded.lost
    spans = result.notes
    first = result.noted or next((s for s, _ in decoded.notes if s and all(s)), None)
    count = len(body) + len(spans)
    if not count:
        return
    shown = body[: _NOTES_LOGGED - min(len(spans), _NOTES_LOGGED // 2)]
    shown += spans[: _NOTES_LOGGED - len(shown)]
    more = f"; and {count - len(shown)} more" if count > len(shown) else ""
    ids = {"trace_id": first[0], "span_id": first[1]} if first else {}
    logger.warning(
        "%d notes (%d about the body as read: text not UTF-8, fields not readable; "
        "%d about spans stored): %s%s",
        count,
        len(body),
        len(spans),
        "; ".join(shown),
        more,
        extra={**ids, "notes": count},
    )


def _notes_parted(
    notes: list[Note], kept: frozenset[tuple[str, str]]
) -> tuple[list[str], list[str]]:
    """The notes of the decoding about what was stored, and about what was not: a span
    rejected (its ids were lost or never valid, its facts or its call id refused), or the
    whole request when none of its spans is stored. Those are not told as stored."""
    stored, not_stored = [], []
    for span, text in notes:
        was_stored = bool(kept) if span is None else span in kept
        (stored if was_stored else not_stored).append(text)
    return stored, not_stored


def _answer_message(rejected: list[str], notes: list[str], not_stored: list[str]) -> str:
    parts = []
    if rejected:
        parts.append(f"拒收 {len(rejected)} 个 span：" + _reasons(rejected))
    if not_stored:
        parts.append(f"未存入的部分有 {len(not_stored)} 处未按所发的读取：" + _reasons(not_stored))
    if notes:
        parts.append(f"已存入，但有 {len(notes)} 处未按所发的读取：" + _reasons(notes))
    return "。".join(part.rstrip("。") for part in parts)


# The spans named with a reason shared by many, as many as the answer lists.
_SPANS_LISTED = 5
# A first part naming one span (`span <id>`, `工具 span <id>`): its notes follow.
_ONE_SPAN = re.compile(r"(?:工具 )?span [0-9a-f]+")


def _reasons(reasons: list[str]) -> str:
    """The reasons, those sharing their first part (`<why>：<span>`: the spans refused
    for one reason, the notes about one span) on one line. A reason shared by spans says
    how many: `<why>：<span a>、<span b> (x2)`; a span's notes are different reasons, each
    about that one span, so they say no count (`<span>：<why a>、<why b>`), which would
    read as the last one said that many times."""
    grouped: dict[str, list[str]] = {}
    for reason in reasons:
        head, _, detail = reason.partition("：")
        details = grouped.setdefault(head, [])
        details.append(detail)
    parts = []
    for head, details in grouped.items():
        shown = list(dict.fromkeys(detail for detail in details if detail))
        text = head
        if shown:
            more = " 等" if len(shown) > _SPANS_LISTED else ""
            text += "：" + "、".join(shown[:_SPANS_LISTED]) + more
        if len(details) > 1 and not _ONE_SPAN.fullmatch(head):
            text += f" (x{len(details)})"
        parts.append(text)
    text = "；".join(parts[:10])
    return text if len(parts) <= 10 else text + f"；另有 {len(parts) - 10} 种原因"


def _error(
    request: HttpRequest, encoding: Encoding | None, status: int, message: str
) -> HttpResponse:
    body, content_type = otlp_wire.error_body(encoding, status, message)
    if status < 500:
        note_refusal(request, message)
    response = HttpResponse(body, status=status, content_type=content_type)
    if status == 401:
        # RFC 9110 asks a 401 for the scheme to use: the API's (ApiKeyAuthentication's
        # authenticate_header), as its own 401s send it.
        response["WWW-Authenticate"] = KEYWORD
    return response
