"""How much of a span is read: its first attributes, events and array items, as the
OpenTelemetry SDKs limit them (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT, OTEL_SPAN_EVENT_COUNT_LIMIT,
OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT: 128 each by default), cut here as soon as the body is
decoded, before anything else reads the request: an attribute with no value costs a few
bytes on the wire and far more to read, store and show.

Of a span: its first `attributes` attributes, and wherever they are sent the attributes the
service reads (READ_KEYS: the session id, the tool's name, its hints...; the last of each
key, as the mapping reads them), so that an agent sending many others loses none of its
facts; its first `events` events, and the first `exception` event when it comes later; an
event's first `attributes` attributes and its exception's type and message; the first
`attributes` items of an array or kvlist value, at any depth. A request reads at most
`total` attributes and items in all (the keys read excepted): past it, a span keeps the
keys read alone. Resources' and scopes' attributes and links are cut alike, unsaid: they
are neither read nor stored. What a span lost is a note for the answer
(diagnosis.otlp_views), its span being stored.

The request is protobuf (opentelemetry-proto's classes, or diagnosis.otlp_lenient's with
bytes for strings) or OTLP JSON as parsed (`capped_document`, before its slow parse).
"""

from dataclasses import dataclass, field
from typing import Any

from diagnosis.otlp_facts import HITS_ATTRIBUTE, KIND_ATTRIBUTE, LEVEL_ATTRIBUTE
from diagnosis.otlp_mapping import KEYS_READ as MAPPING_KEYS
from diagnosis.otlp_messages import KEYS_READ as MESSAGE_KEYS
from diagnosis.selectors import MODEL_CALL_KEYS

# The span attributes the service reads by their key.
_HINT_KEYS = (KIND_ATTRIBUTE, LEVEL_ATTRIBUTE, HITS_ATTRIBUTE)
READ_KEYS = frozenset((*MAPPING_KEYS, *MESSAGE_KEYS, *MODEL_CALL_KEYS, *_HINT_KEYS))
_EXCEPTION = "exception"
_EXCEPTION_KEYS = frozenset(("exception.type", "exception.message"))


def _with_bytes(keys: frozenset[str]) -> frozenset[str | bytes]:
    """The keys as text and as bytes (diagnosis.otlp_lenient's strings)."""
    return frozenset((*keys, *(key.encode() for key in keys)))


_SPAN_KEYS, _EVENT_KEYS = _with_bytes(READ_KEYS), _with_bytes(_EXCEPTION_KEYS)


@dataclass(frozen=True)
class Limits:
    attributes: int = 1024  # of a span, of an event, items of an array or kvlist
    events: int = 1024  # of a span
    total: int = 131072  # attributes and items of a request


@dataclass
class Dropped:
    """What one span lost, counted."""

    attributes: int = 0
    events: int = 0
    event_attributes: int = 0
    items: int = 0
    over_total: int = 0

    def __bool__(self) -> bool:
        return any(vars(self).values())

    def told(self, span_id: str, limits: Limits) -> str:
        parts = []
        for count, what in (
            (self.attributes, f"属性 {{}} 个（每个 span 上限 {limits.attributes} 个）"),
            (self.events, f"事件 {{}} 个（每个 span 上限 {limits.events} 个）"),
            (self.event_attributes, f"事件的属性 {{}} 个（每个事件上限 {limits.attributes} 个）"),
            (self.items, f"数组或 kvlist 的项 {{}} 个（每个上限 {limits.attributes} 项）"),
            (self.over_total, f"属性和项 {{}} 个（一次请求上限 {limits.total} 个）"),
        ):
            if count:
                parts.append(what.format(count))
        return (
            f"span {span_id}：超过上限，只读取了前面的部分（服务读取的属性不计在内），"
            f"其余已丢弃：{'、'.join(parts)}"
        )


# The (trace id, span id) in hex of the span a note is about (diagnosis.otlp_lenient).
SpanKey = tuple[str, str]


@dataclass
class _Cut:
    limits: Limits
    left: int
    dropped: dict[SpanKey, Dropped] = field(default_factory=dict)

    def notes(self) -> list[tuple[SpanKey, str]]:
        return [(key, lost.told(key[1], self.limits)) for key, lost in self.dropped.items() if lost]


# --- protobuf -----------------------------------------------------------------------------


def capped_request(request: Any, limits: Limits) -> list[tuple[SpanKey, str]]:
    """Cuts the decoded request (ExportTraceServiceRequest, or its lenient twin) in place;
    a note for each span that lost anything."""
    cut = _Cut(limits, limits.total)
    unsaid = Dropped()
    for resource in request.resource_spans:
        _key_values_cut(resource.resource.attributes, frozenset(), cut, unsaid, "attributes")
        for scope in resource.scope_spans:
            _key_values_cut(scope.scope.attributes, frozenset(), cut, unsaid, "attributes")
            for span in scope.spans:
                key = (_hex(span.trace_id), _hex(span.span_id))
                lost = cut.dropped.setdefault(key, Dropped())
                _key_values_cut(span.attributes, _SPAN_KEYS, cut, lost, "attributes")
                _events_cut(span, cut, lost)
                if len(span.links) > limits.events:
                    del span.links[limits.events :]
                for link in span.links:
                    _key_values_cut(link.attributes, frozenset(), cut, unsaid, "attributes")
    return cut.notes()


def _hex(value: bytes) -> str:
    return value.hex()


def _events_cut(span: Any, cut: _Cut, lost: Dropped) -> None:
    """The first events, and the first exception event when none of them is one."""
    events, limit = span.events, cut.limits.events
    if len(events) > limit:
        count = len(events)
        later = []
        if not any(_is_exception(event.name) for event in events[:limit]):
            later = [event for event in events[limit:] if _is_exception(event.name)][:1]
        copies = []
        for event in later:
            copy = type(event)()
            copy.CopyFrom(event)
            copies.append(copy)
        del events[limit:]
        events.extend(copies)
        lost.events += count - len(events)
    for event in events:
        _key_values_cut(event.attributes, _EVENT_KEYS, cut, lost, "event_attributes")


def _is_exception(name: str | bytes) -> bool:
    return name in (_EXCEPTION, _EXCEPTION.encode())


def _key_values_cut(
    items: Any, read: frozenset[str | bytes], cut: _Cut, lost: Dropped, what: str
) -> None:
    """Attributes (KeyValues) cut to the limit and to what the request has left, those
    whose key is among `read` kept wherever they are (the last of each)."""
    count = len(items)
    limit = min(cut.limits.attributes, cut.left)
    if count > limit:
        # A scan of every key as sent: the one read of the dropped part.
        last = {item.key: i for i, item in enumerate(items) if item.key in read} if read else {}
        extra = []
        for index in sorted(index for index in last.values() if index >= limit):
            copy = type(items[index])()
            copy.CopyFrom(items[index])
            extra.append(copy)
        del items[limit:]
        items.extend(extra)
        _count_dropped(lost, what, count - len(items), cut)
    cut.left -= min(count, limit)
    for item in items:
        _value_cut(item.value, cut, lost)


def _count_dropped(lost: Dropped, what: str, dropped: int, cut: _Cut) -> None:
    """Dropped for the request's limit once it leaves less than a span's."""
    if cut.left < cut.limits.attributes:
        lost.over_total += dropped
    else:
        setattr(lost, what, getattr(lost, what) + dropped)


def _value_cut(value: Any, cut: _Cut, lost: Dropped) -> None:
    which = value.WhichOneof("value")
    if which == "array_value":
        _items_cut(value.array_value.values, cut, lost)
        for item in value.array_value.values:
            _value_cut(item, cut, lost)
    elif which == "kvlist_value":
        _items_cut(value.kvlist_value.values, cut, lost)
        for item in value.kvlist_value.values:
            _value_cut(item.value, cut, lost)


def _items_cut(items: Any, cut: _Cut, lost: Dropped) -> None:
    """The first items of an array or kvlist (protobuf's repeated field or OTLP JSON's
    list: both cut alike)."""
    count = len(items)
    limit = min(cut.limits.attributes, cut.left)
    if count > limit:
        del items[limit:]
        _count_dropped(lost, "items", count - limit, cut)
    cut.left -= min(count, limit)


# --- OTLP JSON ----------------------------------------------------------------------------


def capped_document(document: dict, limits: Limits) -> list[tuple[SpanKey, str]]:
    """Cuts an OTLP JSON request, as parsed (dicts and lists, ids in hex), in place; a
    note for each span that lost anything. Shapes that are no OTLP are left to the parse."""
    cut = _Cut(limits, limits.total)
    unsaid = Dropped()
    for resource in _listed(document, "resourceSpans", "resource_spans"):
        _json_key_values_cut(_field(resource, "resource"), frozenset(), cut, unsaid, "attributes")
        for scope in _listed(resource, "scopeSpans", "scope_spans"):
            _json_key_values_cut(_field(scope, "scope"), frozenset(), cut, unsaid, "attributes")
            for span in _listed(scope, "spans"):
                if not isinstance(span, dict):
                    continue
                key = (_json_hex(span, "traceId", "trace_id"), _json_hex(span, "spanId", "span_id"))
                lost = cut.dropped.setdefault(key, Dropped())
                _json_key_values_cut(span, _SPAN_KEYS, cut, lost, "attributes")
                _json_events_cut(span, cut, lost)
                links = _listed(span, "links")
                if len(links) > limits.events:
                    del links[limits.events :]
                for link in links:
                    _json_key_values_cut(link, frozenset(), cut, unsaid, "attributes")
    return cut.notes()


def _listed(container: Any, *names: str) -> list:
    if isinstance(container, dict):
        for name in names:
            value = container.get(name)
            if isinstance(value, list):
                return value
    return []


def _field(container: Any, name: str) -> Any:
    return container.get(name) if isinstance(container, dict) else None


def _json_hex(span: dict, *names: str) -> str:
    value = next((span[name] for name in names if name in span), None)
    try:
        return bytes.fromhex(value).hex()
    except (TypeError, ValueError):
        return ""


def _json_events_cut(span: dict, cut: _Cut, lost: Dropped) -> None:
    events = _listed(span, "events")
    limit = cut.limits.events
    if len(events) > limit:
        kept = events[:limit]
        if not any(_json_is_exception(event) for event in kept):
            kept += next(([e] for e in events[limit:] if _json_is_exception(e)), [])
        lost.events += len(events) - len(kept)
        events[:] = kept
    for event in events:
        _json_key_values_cut(event, _EXCEPTION_KEYS, cut, lost, "event_attributes")


def _json_is_exception(event: Any) -> bool:
    return isinstance(event, dict) and event.get("name") == _EXCEPTION


def _json_key(item: Any) -> Any:
    return item.get("key") if isinstance(item, dict) else None


def _json_key_values_cut(
    container: Any, read: frozenset, cut: _Cut, lost: Dropped, what: str
) -> None:
    items = _listed(container, "attributes")
    count = len(items)
    limit = min(cut.limits.attributes, cut.left)
    if count > limit:
        last = {}
        for index, item in enumerate(items if read else ()):
            name = _json_key(item)
            if isinstance(name, str) and name in read:
                last[name] = index
        wanted = sorted(index for index in last.values() if index >= limit)
        items[:] = items[:limit] + [items[index] for index in wanted]
        _count_dropped(lost, what, count - len(items), cut)
    cut.left -= min(count, limit)
    for item in items:
        if isinstance(item, dict):
            _json_value_cut(item.get("value"), cut, lost)


def _json_value_cut(value: Any, cut: _Cut, lost: Dropped) -> None:
    if not isinstance(value, dict):
        return
    for name in ("arrayValue", "array_value"):
        items = _listed(_field(value, name), "values")
        _items_cut(items, cut, lost)
        for item in items:
            _json_value_cut(item, cut, lost)
    for name in ("kvlistValue", "kvlist_value"):
        items = _listed(_field(value, name), "values")
        _items_cut(items, cut, lost)
        for item in items:
            if isinstance(item, dict):
                _json_value_cut(item.get("value"), cut, lost)
