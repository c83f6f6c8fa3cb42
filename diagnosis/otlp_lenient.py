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

Each string repaired is a note for the answer's `partial_success`: the span is stored.
"""

import re
from collections import deque
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

REPAIRED = "字符串不是合法的 UTF-8，无效的字节已换为 U+FFFD"
_SPAN = "opentelemetry.proto.trace.v1.Span"
_SHOWN_CHARS = 80  # of an attribute key named in a note
_SURROGATE = re.compile("[\ud800-\udfff]")


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
            for field in message.field:
                if field.type == FieldDescriptor.TYPE_STRING:
                    field.type = FieldDescriptor.TYPE_BYTES
                    names.add(field.name)
            strings[full_name] = frozenset(names)
            pending += [(f"{full_name}.{nested.name}", nested) for nested in message.nested_type]
        pool.Add(proto)
    request = pool.FindMessageTypeByName(ExportTraceServiceRequest.DESCRIPTOR.full_name)
    return message_factory.GetMessageClass(request), strings


_LenientRequest, _STRING_FIELDS = _lenient_classes()


def protobuf_repaired(body: bytes) -> tuple[ExportTraceServiceRequest, list[str]] | None:
    """The request with its strings that are not UTF-8 repaired, and a note for each;
    None when the body is no request for another reason (it stays a 400)."""
    try:
        lenient = _LenientRequest.FromString(body)
    except (DecodeError, ValueError, RuntimeError):
        return None
    notes: list[str] = []
    pending: deque[tuple[Message, str]] = deque([(lenient, "")])  # in the body's order
    while pending:
        message, where = pending.popleft()
        full_name = message.DESCRIPTOR.full_name
        if full_name == _SPAN:
            where = f"span {message.span_id.hex()}"  # type: ignore[attr-defined]
        for field, value in message.ListFields():
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                items = value if field.is_repeated else [value]
                pending += [
                    (item, _where_item(full_name, field.name, item, where)) for item in items
                ]
            elif field.name in _STRING_FIELDS[full_name]:
                _bytes_repaired(message, field, value, where, notes)
    if not notes:
        return None
    try:
        request = ExportTraceServiceRequest.FromString(lenient.SerializeToString())
    except (DecodeError, ValueError, RuntimeError):
        return None
    return request, notes


def _where_item(full_name: str, field_name: str, item: Any, where: str) -> str:
    if full_name == _SPAN and field_name == "attributes":
        return _attribute(where, item.key.decode("utf-8", "replace"))
    return where


def _attribute(where: str, key: str) -> str:
    return f"{where} 属性 {key[:_SHOWN_CHARS]}"


def _bytes_repaired(
    message: Message, field: FieldDescriptor, value: Any, where: str, notes: list[str]
) -> None:
    values = list(value) if field.is_repeated else [value]
    for index, raw in enumerate(values):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            fixed = raw.decode("utf-8", "replace").encode()
            if field.is_repeated:
                value[index] = fixed
            else:
                setattr(message, field.name, fixed)
            notes.append(_note(where))


def json_repaired(document: dict) -> list[str]:
    """Repairs, in place, the strings of an OTLP JSON document holding a lone surrogate:
    a byte of the body that is no UTF-8 (read with errors="surrogateescape"), or a JSON
    escape of half a character. A note for each."""
    notes: list[str] = []
    pending: deque[tuple[Any, str, str]] = deque([(document, "", "")])  # in the body's order
    while pending:
        node, parent_key, where = pending.popleft()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = _text_checked(item, where, notes)
                else:
                    pending.append((item, parent_key, where))
            continue
        if not isinstance(node, dict):
            continue
        if parent_key == "spans":
            where = f"span {_shown(node.get('spanId', node.get('span_id')))}"
        items = [(_text_checked(key, where, notes), value) for key, value in node.items()]
        node.clear()
        for key, value in items:
            if isinstance(value, str):
                node[key] = _text_checked(value, where, notes)
                continue
            node[key] = value
            if parent_key == "spans" and key == "attributes" and isinstance(value, list):
                pending += [(item, key, _json_attribute(where, item)) for item in value]
            else:
                pending.append((value, key, where))
    return notes


def _json_attribute(where: str, item: Any) -> str:
    key = item.get("key") if isinstance(item, dict) else None
    return _attribute(where, _shown(key)) if isinstance(key, str) else where


def _shown(text: Any) -> str:
    """A span id or key named in a note, as sent (lone surrogates as U+FFFD)."""
    return _SURROGATE.sub("\ufffd", text) if isinstance(text, str) else ""


def _text_checked(text: str, where: str, notes: list[str]) -> str:
    if not _SURROGATE.search(text):
        return text
    notes.append(_note(where))
    # The body's bytes back where surrogateescape kept them (an escape \udc80-\udcff reads
    # as that byte too), decoded as the protobuf parse decodes them: U+FFFD per invalid
    # sequence. Any other surrogate (an escape of half a character) is one U+FFFD.
    kept = "".join(
        char if "\udc80" <= char <= "\udcff" or not "\ud800" <= char <= "\udfff" else "\udcff"
        for char in text
    )
    return kept.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _note(where: str) -> str:
    return f"{REPAIRED}：{where or 'span 之外（resource 或 scope）'}"
