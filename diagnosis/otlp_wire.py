"""OTLP/HTTP on the wire: reading a request body and writing the answer.

Bodies are protobuf (`application/x-protobuf`) or OTLP JSON (`application/json`), plain,
gzip or deflate. Both are decoded by opentelemetry-proto's generated classes. OTLP JSON differs
from the protobuf JSON mapping in one way that matters: trace and span ids are hex
strings, not base64; they are turned into base64 before the JSON is parsed. An id that
is not hex is passed on empty, and the span is then rejected on its own (a partial
success) rather than the whole request. A string that is not valid UTF-8 (an SDK cut a
character in two) is read with U+FFFD for its invalid bytes and told in the answer, as
diagnosis.otlp_lenient says; the protobuf runtime alone would refuse the whole body. So is
an OTLP JSON field name: repaired, it is no OTLP field, and it is ignored. Every text of a
span is then read without its NUL characters, which nothing stores. A compressed body
must be whole and nothing more: bytes after its end are refused.

Answers are in the request's encoding: ExportTraceServiceResponse on success (with
`partial_success` when spans were rejected), google.rpc.Status on failure.
"""

import base64
import binascii
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from config.parsers import NumberTooLong, json_int
from diagnosis.otlp_lenient import JsonRepairs, Note, json_repaired, protobuf_repaired
from diagnosis.otlp_limits import Limits, capped_document, capped_request

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_READ_CHUNK = 64 * 1024

# google.rpc.Code values for the Status body of an error answer.
_RPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 413: 8, 415: 3, 429: 8, 503: 14}


class WireError(Exception):
    """A request the endpoint refuses whole, with its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Encoding:
    content_type: str  # PROTOBUF or JSON: the request's, and so the answer's


def encoding_of(content_type: str) -> Encoding:
    media = content_type.split(";", 1)[0].strip().lower()
    if media == PROTOBUF:
        return Encoding(PROTOBUF)
    if media == JSON:
        return Encoding(JSON)
    raise WireError(415, f"Content-Type 必须是 {PROTOBUF} 或 {JSON}（收到 {media or '空'}）")


def body_read(stream: Any, *, content_encoding: str, declared_length: int, limit: int) -> bytes:
    """The request body, decompressed; 413 past `limit` bytes, found while reading, so a
    gzip or deflate bomb is stopped after `limit` bytes of output. What is left of a body
    over the limit is read and thrown away before the 413 is sent (config.request_body)."""
    sent_too_large = WireError(413, f"请求体过大（上限 {limit} 字节）")
    if declared_length > limit:
        raise sent_too_large
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise sent_too_large
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding == "gzip":
        # A gzip body may be several members one after another (RFC 1952): each is
        # inflated in turn, as `gzip -d` does, and the limit holds for all of them.
        return _inflated(raw, 16 + zlib.MAX_WBITS, limit, name="gzip", members=True)
    if encoding == "deflate":
        # HTTP's deflate is zlib's format (RFC 1950), which the Python SDK's exporter sends
        # (zlib.compress); some clients send raw deflate (RFC 1951) under that name.
        # Raw deflate may open with two bytes that read as a zlib header: read raw then.
        if not _zlib_header(raw):
            return _inflated(raw, -zlib.MAX_WBITS, limit, name="deflate", members=False)
        try:
            return _inflated(raw, zlib.MAX_WBITS, limit, name="deflate", members=False)
        except WireError as error:
            if error.status != 400:
                raise
            try:
                return _inflated(raw, -zlib.MAX_WBITS, limit, name="deflate", members=False)
            except WireError as raw_error:
                if raw_error.status != 400:
                    raise
                # Neither: what zlib's format, which the header named, found wrong is told.
                raise error from None
    raise WireError(415, f"不支持的 Content-Encoding：{encoding}（支持 gzip、deflate）")


def _zlib_header(data: bytes) -> bool:
    """Whether `data` opens with a zlib header (RFC 1950): deflate, a window of at most
    32 KB, and a check of the two bytes that a multiple of 31 makes."""
    return (
        len(data) >= 2
        and data[0] & 0x0F == 8
        and data[0] >> 4 <= 7
        and ((data[0] << 8 | data[1]) % 31 == 0)
    )


def _inflated(data: bytes, wbits: int, limit: int, *, name: str, members: bool) -> bytes:
    """`data` inflated whole. Bytes after the end of the compressed data are refused, not
    ignored: a body cut and joined wrong, or one whose encoding is other than it says, is
    told as such rather than read in part. With `members` (gzip), what follows a member
    must be another whole member."""
    too_large = WireError(413, f"请求体过大（解压后上限 {limit} 字节）")
    out = bytearray()
    first = True
    while True:
        try:
            rest = _member_inflated(data, wbits, limit, out, name=name)
        except WireError:
            if first:
                raise
            raise _trailing(name, len(data), members) from None
        if len(out) > limit:
            raise too_large
        if not rest:
            return bytes(out)
        if not members:
            raise _trailing(name, len(rest), members)
        data, first = rest, False


def _member_inflated(data: bytes, wbits: int, limit: int, out: bytearray, *, name: str) -> bytes:
    """One compressed stream at the start of `data` inflated onto `out` (stopped once `out`
    holds more than `limit` bytes); the bytes after it."""
    inflater = zlib.decompressobj(wbits=wbits)
    try:
        while data:
            out += inflater.decompress(data, limit + 1 - len(out))
            if len(out) > limit:
                return b""
            data = inflater.unconsumed_tail
        out += inflater.flush()
    except zlib.error:
        raise WireError(400, f"{name} 数据无法解压") from None
    if not inflater.eof:
        raise WireError(400, f"{name} 数据不完整")
    return inflater.unused_data


def _trailing(name: str, count: int, members: bool) -> WireError:
    what = f"{name} 数据结束后还有 {count} 字节多余的数据"
    return WireError(400, what + (f"，不是另一段完整的 {name} 数据" if members else ""))


@dataclass(frozen=True)
class Decoded:
    request: ExportTraceServiceRequest
    # One per string that was not valid UTF-8, read with U+FFFD, or OTLP JSON field that
    # was ignored for it, with the span it is about (diagnosis.otlp_lenient).
    notes: list[Note]
    # One reason per span lost with an OTLP JSON field ignored above it: rejected.
    lost: list[str] = field(default_factory=list)


def request_decoded(body: bytes, encoding: Encoding, limits: Limits | None = None) -> Decoded:
    """The request, its spans cut to `limits` (diagnosis.otlp_limits) before anything
    else reads them."""
    limits = limits or Limits()
    if encoding.content_type == JSON:
        decoded = _json_decoded(body, limits)
    else:
        try:
            request = ExportTraceServiceRequest.FromString(body)
            decoded = Decoded(request, capped_request(request, limits))
        except (DecodeError, ValueError, RuntimeError) as exc:
            # Read again, strings as bytes, only once the strict parse refused the body.
            repaired = protobuf_repaired(body, lambda lenient: capped_request(lenient, limits))
            if repaired is None:
                raise WireError(400, f"protobuf 请求体无法解码：{exc}") from None
            decoded = Decoded(*repaired)
    _spans_without_nul(decoded.request)
    return decoded


def _spans_without_nul(request: ExportTraceServiceRequest) -> None:
    """Every text of the request's spans without its NUL characters (U+0000), here where
    the body becomes text, before anything reads it: what is stored of a span (its name,
    attribute keys and values at any depth, status message, events), what is read from it
    (session and user id, tool name, and the text the redaction's patterns read: a NUL
    inside a secret would split it). MariaDB and SQLite store a NUL, which then breaks
    exports and LIKE; the REST API refuses one (400), a span is read without."""
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                if "\x00" in span.name:
                    span.name = span.name.replace("\x00", "")
                if "\x00" in span.status.message:
                    span.status.message = span.status.message.replace("\x00", "")
                _key_values_without_nul(span.attributes)
                for event in span.events:
                    if "\x00" in event.name:
                        event.name = event.name.replace("\x00", "")
                    _key_values_without_nul(event.attributes)


def _key_values_without_nul(items: Iterable[KeyValue]) -> None:
    for item in items:
        if "\x00" in item.key:
            item.key = item.key.replace("\x00", "")
        _value_without_nul(item.value)


def _value_without_nul(value: AnyValue) -> None:
    which = value.WhichOneof("value")
    if which == "string_value":
        if "\x00" in value.string_value:
            value.string_value = value.string_value.replace("\x00", "")
    elif which == "array_value":
        for item in value.array_value.values:
            _value_without_nul(item)
    elif which == "kvlist_value":
        _key_values_without_nul(value.kvlist_value.values)


_REFUSED = (json_format.ParseError, ValueError, TypeError, RecursionError)


def _json_decoded(body: bytes, limits: Limits) -> Decoded:
    # Cut before anything walks the document: its parse is the slowest part of a request.
    document, bytes_not_utf8 = _json_document(body)
    capped = capped_document(document, limits)
    repairs = json_repaired(document) if bytes_not_utf8 else JsonRepairs()
    try:
        request, lost = _json_request(document)
        return Decoded(request, capped + repairs.notes, repairs.lost + lost)
    except (*_REFUSED, SystemError) as exc:
        refused = exc
    # A lone surrogate (a JSON escape of half a character, "\ud83d", or its UTF-8 bytes,
    # which json.loads passes) is refused by the runtime, in a field name with a
    # SystemError (upb): only then is the body read again and its strings repaired.
    document, _ = _json_document(body)
    capped = capped_document(document, limits)
    repairs = json_repaired(document)
    if not repairs:
        if isinstance(refused, SystemError):
            raise refused
        raise WireError(400, f"JSON 请求体不是合法的 OTLP：{refused}")
    try:
        request, lost = _json_request(document)
        return Decoded(request, capped + repairs.notes, repairs.lost + lost)
    except _REFUSED as exc:
        raise WireError(400, f"JSON 请求体不是合法的 OTLP：{exc}") from None


def _json_document(body: bytes) -> tuple[dict, bool]:
    """The JSON object, and whether bytes of it were no UTF-8 (each kept as a lone
    surrogate by "surrogateescape", for json_repaired; outside a string, an error)."""
    bytes_not_utf8 = False
    try:
        try:
            document = json.loads(body, parse_int=json_int)
        except UnicodeDecodeError:
            bytes_not_utf8 = True
            document = json.loads(body.decode("utf-8-sig", "surrogateescape"), parse_int=json_int)
    except NumberTooLong as exc:
        raise WireError(400, str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise WireError(400, f"JSON 请求体无法解析：{exc}") from None
    if not isinstance(document, dict):
        raise WireError(400, "JSON 请求体必须是一个对象（ExportTraceServiceRequest）")
    return document, bytes_not_utf8


def _json_request(document: dict) -> tuple[ExportTraceServiceRequest, list[str]]:
    """The request, and one reason per span refused for ids in base64 (taken out)."""
    lost = _hex_ids_to_base64(document)
    request = ExportTraceServiceRequest()
    json_format.ParseDict(document, request, ignore_unknown_fields=True)
    return request, lost


_ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")
# Bytes of each id: a trace id's 16 are 32 hex characters in OTLP JSON, 24 in base64.
_ID_BYTES = {"traceId": 16, "trace_id": 16}
_BASE64_IDS = (
    "span 的 id 是 base64（OTLP JSON 的 trace id 是 32 个十六进制字符，span id 是 16 个，"
    "不是 protobuf JSON 映射的 base64）"
)


def _hex_ids_to_base64(document: dict) -> list[str]:
    """The hex ids turned into the base64 the protobuf parse reads. A span whose ids are
    in base64 already (an exporter using protobuf's JSON mapping) is taken out, with a
    reason saying so: one reason per span."""
    lost = []
    for resource_spans in _items(document, "resourceSpans", "resource_spans"):
        for scope_spans in _items(resource_spans, "scopeSpans", "scope_spans"):
            spans = _items(scope_spans, "spans")
            kept = []
            for span in spans:
                if _base64_ids(span):
                    lost.append(f"{_BASE64_IDS}：{_json_span_named(span)}")
                    continue
                _convert_ids(span)
                for link in _items(span, "links"):
                    _convert_ids(link)
                kept.append(span)
            spans[:] = kept
    return lost


def _base64_ids(span: object) -> bool:
    """Whether an id of the span is no hex but base64 of an id's length."""
    if not isinstance(span, dict):
        return False
    for key in _ID_FIELDS:
        value = span.get(key)
        if not isinstance(value, str) or not value:
            continue
        try:
            bytes.fromhex(value)
            continue
        except ValueError:
            pass
        try:
            decoded = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(decoded) == _ID_BYTES.get(key, 8):
            return True
    return False


def _json_span_named(span: dict) -> str:
    """A span as the answer names it: its name (cut at 80 characters), and its span id
    as sent."""
    name = span.get("name")
    shown = name[:80] if isinstance(name, str) and name else "(unnamed)"
    span_id = next((span[k] for k in ("spanId", "span_id") if isinstance(span.get(k), str)), "")
    return f"“{shown}”" + (f" {span_id[:24]}" if span_id else "")


def _items(container: object, *keys: str) -> list:
    if not isinstance(container, dict):
        return []
    for key in keys:
        value = container.get(key)
        if isinstance(value, list):
            return value
    return []


def _convert_ids(item: object) -> None:
    if not isinstance(item, dict):
        return
    for key in _ID_FIELDS:
        value = item.get(key)
        if isinstance(value, str):
            try:
                item[key] = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                item[key] = ""  # not hex: the span is rejected by the mapping, alone
        elif value is not None:
            item[key] = ""


def response_body(encoding: Encoding, *, rejected: int, message: str) -> bytes:
    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return _encoded(response, encoding)


def error_body(encoding: Encoding | None, status: int, message: str) -> tuple[bytes, str]:
    """A google.rpc.Status in the request's encoding (JSON when it is unknown)."""
    body = Status(code=_RPC_CODES.get(status, 2), message=message)
    encoding = encoding or Encoding(JSON)
    return _encoded(body, encoding), encoding.content_type


def _encoded(message: Message, encoding: Encoding) -> bytes:
    if encoding.content_type == PROTOBUF:
        return message.SerializeToString()
    return json_format.MessageToJson(message, indent=None, ensure_ascii=False).encode()


def hex_id(value: bytes) -> str:
    return binascii.hexlify(value).decode()
