"""Reading an OTLP request whose strings are not all valid UTF-8.

SDKs that cut a long attribute at a byte count (Go, Rust, JS, ...) may cut a character in
two, and protobuf's runtime refuses a whole message with one such string (`String field
had bad UTF-8`), where the OpenTelemetry Collector takes it. So that one attribute does not
lose the batch, a body the strict parse refused is parsed again with classes built here
from opentelemetry-proto's own descriptors, every `string` field turned into `bytes` (the
same bytes on the wire, without the check), in a descriptor pool of their own. A string
that is not UTF-8 is decoded with U+FFFD for its invalid bytes (errors="replace"), and the
request is read again by the official classes. OTLP JSON gets the same: invalid bytes, and
lone surrogates (`"\\ud83d"`: half an emoji cut by a JS SDK), become U+FFFD.

Each string repaired is a note for the answer's `partial_success`, with the span it is
about: the answer tells it as stored only when that span was. In OTLP JSON a field name
(an object's key) may hold one too; repaired, it is no OTLP field, and it is ignored as
the OpenTelemetry Collector ignores an unknown field: the span is read without it (and
rejected if that leaves it without its ids), and the spans an ignored field held are lost,
one rejection each.
"""

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

REPAIRED = "字符串不是合法的 UTF-8，无效的字节已换为 U+FFFD"
_SPAN = "opentelemetry.proto.trace.v1.Span"
_SHOWN_CHARS = 80  # of an attribute key or field name named in a note
_SURROGATE = re.compile("[\ud800-\udfff]")
FIELD_IGNORED = "字段名不是合法的 UTF-8，换为 U+FFFD 后不是 OTLP 的字段，已忽略"
_OUTSIDE = "span 之外（resource 或 scope）"
# Where a span is in OTLP JSON: an object of the third list down from the request
# (resourceSpans[].scopeSpans[].spans[]). Every list of objects on the way is one of those
# three: the other fields of a ResourceSpans or ScopeSpans are objects or strings.
_SPAN_DEPTH = 3

# The (trace id, span id) in hex of the span a note is about, as the mapping reads them;
# ("", "") for a span whose ids cannot be read (it is rejected), None outside any span.
SpanKey = tuple[str, str]
# A string read otherwise than sent, and the span it is about.
Note = tuple[SpanKey | None, str]
_NO_IDS: SpanKey = ("", "")


def _files(file: FileDescriptor) -> list[FileDescriptor]:
    """The file and those it imports, each after its imports."""
    ordered: list[FileDescriptor] = []
    for dependency in file.dependencies:
        ordered += [known for known in _files(dependency) if known not in ordered]
    return [*ordered, file]


def _lenient_classes() -> tuple[type[Message], dict[str, frozenset[str]]]:
    """ExportTraceServiceRequest with bytes for strings, and the fields that were strings
    in each message (by full name). Its own pool: the names are opentelemetry-proto's,
    which the default pool already holds."""
    pool = descriptor_pool.DescriptorPool()
    strings: dict[str, frozenset[str]] = {}
    for file in _files(ExportTraceServiceRequest.DESCRIPTOR.file):
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        pending = [(f"{proto.package}.{message.name}", message) for message in proto.message_type]
        while pending:
            full_name, message = pending.pop()
            names = set()
            for proto_field in message.field:
                if proto_field.type == FieldDescriptor.TYPE_STRING:
                    proto_field.type = FieldDescriptor.TYPE_BYTES
                    names.add(proto_field.name)
            strings[full_name] = frozenset(names)
            pending += [(f"{full_name}.{nested.name}", nested) for nested in message.nested_type]
        pool.Add(proto)
    request = pool.FindMessageTypeByName(ExportTraceServiceRequest.DESCRIPTOR.full_name)
    return message_factory.GetMessageClass(request), strings


_LenientRequest, _STRING_FIELDS = _lenient_classes()


def protobuf_repaired(
    body: bytes, capped: Callable[[Message], list[Note]] = lambda _: []
) -> tuple[ExportTraceServiceRequest, list[Note]] | None:
    """The request with its strings that are not UTF-8 repaired, and a note for each;
    None when the body is no request for another reason (it stays a 400). `capped` cuts
    the request as read before its strings are (diagnosis.otlp_limits), with its notes."""
    try:
        lenient = _LenientRequest.FromString(body)
    except (DecodeError, ValueError, RuntimeError):
        return None
    cut = capped(lenient)
    notes: list[Note] = []
    # In the body's order: a message, where it is (for a note) and the span it is in.
    pending: deque[tuple[Message, str, SpanKey | None]] = deque([(lenient, "", None)])
    while pending:
        message, where, span = pending.popleft()
        full_name = message.DESCRIPTOR.full_name
        if full_name == _SPAN:
            span = (message.trace_id.hex(), message.span_id.hex())  # type: ignore[attr-defined]
            where = f"span {span[1]}"
        for descriptor, value in message.ListFields():
            if descriptor.type == FieldDescriptor.TYPE_MESSAGE:
                items = value if descriptor.is_repeated else [value]
                pending += [
                    (item, _where_item(full_name, descriptor.name, item, where), span)
                    for item in items
                ]
            elif descriptor.name in _STRING_FIELDS[full_name]:
                _bytes_repaired(message, descriptor, value, (span, where), notes)
    if not notes and not cut:
        return None  # nothing repaired, nor dropped (what the strict parse refused may be)
    try:
        request = ExportTraceServiceRequest.FromString(lenient.SerializeToString())
    except (DecodeError, ValueError, RuntimeError):
        return None
    return request, cut + notes


def _where_item(full_name: str, field_name: str, item: Any, where: str) -> str:
    if full_name == _SPAN and field_name == "attributes":
        return _attribute(where, item.key.decode("utf-8", "replace"))
    return where


def _attribute(where: str, key: str) -> str:
    return f"{where} 属性 {key[:_SHOWN_CHARS]}"


def _bytes_repaired(
    message: Message,
    descriptor: FieldDescriptor,
    value: Any,
    at: tuple[SpanKey | None, str],
    notes: list[Note],
) -> None:
    values = list(value) if descriptor.is_repeated else [value]
    for index, raw in enumerate(values):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            fixed = raw.decode("utf-8", "replace").encode()
            if descriptor.is_repeated:
                value[index] = fixed
            else:
                setattr(message, descriptor.name, fixed)
            notes.append((at[0], _note(at[1])))


@dataclass
class JsonRepairs:
    notes: list[Note] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # one reason per span lost

    def __bool__(self) -> bool:
        return bool(self.notes or self.lost)


def json_repaired(document: dict) -> JsonRepairs:
    """Repairs, in place, the strings of an OTLP JSON document holding a lone surrogate:
    a byte of the body that is no UTF-8 (read with errors="surrogateescape"), or a JSON
    escape of half a character. A note for each; a field whose name holds one is taken
    out (no OTLP field has U+FFFD in its name), with a note, or a reason for each span
    it held, which is lost."""
    repairs = JsonRepairs()
    # In the body's order: a node, its field's name, where it is, the span it is in, and
    # for a node on the way to the spans (through lists only) how many lists down it is.
    pending: deque[tuple[Any, str, str, SpanKey | None, int | None]] = deque(
        [(document, "", "", None, 0)]
    )
    while pending:
        node, parent_key, where, span, depth = pending.popleft()
        if isinstance(node, list):
            below = depth + 1 if depth is not None and depth < _SPAN_DEPTH else None
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = _text_checked(item, (span, where), repairs.notes)
                else:
                    pending.append((item, parent_key, where, span, below))
            continue
        if not isinstance(node, dict):
            continue
        in_span = parent_key == "spans" and span is None
        if in_span:
            where, span = _span_where(node), _span_key(node)
        fields = list(node.items())
        node.clear()
        for key, value in fields:
            if _SURROGATE.search(key):
                _field_ignored(key, value, (span, where), repairs, depth)
            elif isinstance(value, str):
                node[key] = _text_checked(value, (span, where), repairs.notes)
            else:
                node[key] = value
                if in_span and key == "attributes" and isinstance(value, list):
                    pending += [
                        (item, key, _json_attribute(where, item), span, None) for item in value
                    ]
                else:
                    on_the_way = isinstance(value, list) and not in_span
                    pending.append((value, key, where, span, depth if on_the_way else None))
    return repairs


def _field_ignored(
    key: str,
    value: Any,
    at: tuple[SpanKey | None, str],
    repairs: JsonRepairs,
    depth: int | None,
) -> None:
    """`depth`: how many lists down from the request the field's object is, None for an
    object off the way to the spans (a resource, a scope, an attribute)."""
    name = _shown(key)[:_SHOWN_CHARS]
    # Inside a span, a field ignored loses no other span (the span's own ids missing, the
    # mapping rejects it); above the spans, it may hold some.
    lost = _spans_in(value, depth) if at[0] is None and depth is not None else []
    if lost:
        head = f"字段名 {name} 不是合法的 UTF-8，换为 U+FFFD 后不是 OTLP 的字段，其中的 span 未读取"
        repairs.lost += [f"{head}：{span}" for span in lost]
    else:
        repairs.notes.append((at[0], f"{FIELD_IGNORED}：{at[1] or _OUTSIDE} 字段 {name}"))


def _spans_in(value: Any, depth: int) -> list[str]:
    """The spans in an ignored field's value, each as the answer names a span: the
    objects where spans are, whatever their fields (their own names may be damaged too)."""
    found: list[str] = []
    if not isinstance(value, list):
        return found  # an object or a string: off the way to the spans
    pending: deque[tuple[Any, int]] = deque([(value, depth)])
    while pending:
        node, at = pending.popleft()
        if isinstance(node, list):
            pending += [(item, at + 1) for item in node if isinstance(item, dict)]
        elif isinstance(node, dict) and at == _SPAN_DEPTH:
            span_id = _shown(node.get("spanId", node.get("span_id")))
            found.append(f"“{_span_name(node)}”" + (f" {span_id}" if span_id else ""))
        elif isinstance(node, dict) and at < _SPAN_DEPTH:
            pending += [(field, at) for field in node.values() if isinstance(field, list)]
    return found


def _span_name(node: dict) -> str:
    return _shown(node.get("name"))[:_SHOWN_CHARS] or "(unnamed)"


def _span_where(node: dict) -> str:
    span_id = _shown(node.get("spanId", node.get("span_id")))
    return f"span {span_id}" if span_id else f"span “{_span_name(node)}”"


def _span_key(node: dict) -> SpanKey:
    """The span's ids in hex as the mapping reads them, or _NO_IDS when they cannot be."""
    ids = []
    for names in (("traceId", "trace_id"), ("spanId", "span_id")):
        value = next((node[name] for name in names if name in node), None)
        try:
            ids.append(bytes.fromhex(value).hex())
        except (TypeError, ValueError):
            return _NO_IDS
    return ids[0], ids[1]


def _json_attribute(where: str, item: Any) -> str:
    key = item.get("key") if isinstance(item, dict) else None
    return _attribute(where, _shown(key)) if isinstance(key, str) else where


def _shown(text: Any) -> str:
    """A span id or key named in a note, as sent (lone surrogates as U+FFFD)."""
    return _SURROGATE.sub("\ufffd", text) if isinstance(text, str) else ""


def _text_checked(text: str, at: tuple[SpanKey | None, str], notes: list[Note]) -> str:
    if not _SURROGATE.search(text):
        return text
    notes.append((at[0], _note(at[1])))
    # The body's bytes back where surrogateescape kept them (an escape \udc80-\udcff reads
    # as that byte too), decoded as the protobuf parse decodes them: U+FFFD per invalid
    # sequence. Any other surrogate (an escape of half a character) is one U+FFFD.
    kept = "".join(
        char if "\udc80" <= char <= "\udcff" or not "\ud800" <= char <= "\udfff" else "\udcff"
        for char in text
    )
    return kept.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _note(where: str) -> str:
    return f"{REPAIRED}：{where or _OUTSIDE}"
