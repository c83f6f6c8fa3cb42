"""From OpenTelemetry spans to sessions, timeline rows and tool-invocation facts.

This module holds the mapping (docs/otlp.md has it as a table), but for the question and
the answer read from message attributes (`otlp_messages`). Three span dialects are read:
the OpenTelemetry GenAI conventions (pydantic-ai and others: `invoke_agent`, `chat`,
`execute_tool`), OpenInference (`openinference.span.kind` AGENT / LLM / TOOL / RETRIEVER
...) and Spring AI's observations (`spring.ai.tool.definition.name`).

`spans_read()` turns a decoded request into SpanRecords (texts redacted, long values
cut) and the reasons for the spans it rejects; diagnosis.otlp_facts turns a tool span's
record into a tool-invocation object of the REST API's shape.
"""

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.proto.trace.v1.trace_pb2 import SpanFlags, Status

from diagnosis.facts_rules import USER_ID_MAX_LENGTH
from diagnosis.models import SpanRole
from diagnosis.otlp_documents import documents_found, documents_text
from diagnosis.otlp_handoffs import is_handoff
from diagnosis.otlp_messages import answer_of, characters_unescaped, question_of
from diagnosis.services import stored_text

# Where the session id is read, first found wins; the trace id when none is set.
SESSION_ATTRIBUTES = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "spring.ai.chat.client.conversation.id",
)
USER_ATTRIBUTES = ("user.id", "enduser.id", "langfuse.user.id")
TRUNCATED_ATTRIBUTE = "diagnosis.truncated"
# Set (true) on a span whose parent is remote, as Span.flags said: the stored span keeps
# it, so a later request bringing the agent's run below it can make it the root.
REMOTE_PARENT_ATTRIBUTE = "diagnosis.parent_is_remote"
# Set on the root that completed its session without an answer of its own, to that
# session's id: the session's answer is then its trace's last model or agent call's, which
# a call of the trace arriving later may still be (diagnosis.otlp_completion).
ANSWERED_BY_TRACE_ATTRIBUTE = "diagnosis.answered_by_trace"
# How deep the stored attributes nest, their object being the first level: MariaDB's CHECK
# on the JSON column refuses JSON nested deeper than 32. An array or kvlist that would
# nest deeper is stored as its JSON text, a string: the same span is stored alike on every
# database, and nothing of it is lost.
MAX_JSON_DEPTH = 16
# Span.flags bits 8 and 9: whether the parent is known to be local or remote, and that it
# is remote. The OpenTelemetry SDKs set both on a span continuing a context that came in
# a request (`traceparent`), bit 8 alone on the others.
_REMOTE_PARENT = (
    SpanFlags.SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SpanFlags.SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
)

_TOOL_NAME = ("gen_ai.tool.name", "tool.name", "spring.ai.tool.definition.name")
_TOOL_ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "spring.ai.tool.call.arguments",
    "input.value",
    "tool_arguments",
)
_TOOL_RESULT = (
    "gen_ai.tool.call.result",
    "spring.ai.tool.call.result",
    "output.value",
    "tool_response",  # pydantic-ai's instrumentation format 2
)
# The keys read here, which a span keeps however many others it sends (otlp_limits).
KEYS_READ = (*SESSION_ATTRIBUTES, *USER_ATTRIBUTES, *_TOOL_NAME, *_TOOL_ARGUMENTS, *_TOOL_RESULT)
KEYS_READ += ("gen_ai.operation.name", "openinference.span.kind", "spring.ai.kind")
_MODEL_OPERATIONS = {"chat", "text_completion", "generate_content", "embeddings"}
_AGENT_OPERATIONS = {"invoke_agent", "create_agent"}


@dataclass
class SpanRecord:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    role: str
    is_error: bool
    started_at: datetime
    ended_at: datetime
    attributes: dict[str, Any]
    truncated: bool
    error_message: str
    arguments: str = ""
    result: str = ""
    session_hint: str | None = None
    # The first session attribute, when of a type no session id has (an array, a double,
    # a bool), as shown to the exporter: ignored, and said (diagnosis.otlp_session_keys).
    session_hint_unusable: str | None = None
    user_id: str | None = None
    tool_name: str | None = None
    is_retriever: bool = False
    documents: int | None = None
    # A tool's result as sent, when longer than the stored `result` (cut), for its hits
    # and match level; not stored. The body limit (OTLP_MAX_BODY_BYTES) bounds it.
    whole_result: str | None = None
    parent_is_remote: bool = False
    ended_before_start: bool = False  # as sent, or no end sent: `ended_at` is its start

    @property
    def is_root(self) -> bool:
        """A span with no parent: the root of its trace. One whose parent is remote may be
        the root too, when the agent's run is below it (see `root_span_id`)."""
        return not self.parent_span_id

    @property
    def duration_ms(self) -> int:
        return max(0, int((self.ended_at - self.started_at).total_seconds() * 1000))


@dataclass
class ReadSpans:
    records: list[SpanRecord] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # one reason per rejected span


def span_count(request: ExportTraceServiceRequest) -> int:
    return sum(
        len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans
    )


def spans_read(
    request: ExportTraceServiceRequest, *, redact: Callable[[str], str], max_chars: int
) -> ReadSpans:
    read = ReadSpans()
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                problem = _id_problem(span, redact)
                if problem:
                    read.rejected.append(problem)
                    continue
                read.records.append(_record(span, redact=redact, max_chars=max_chars))
    return read


def _id_problem(span: ProtoSpan, redact: Callable[[str], str]) -> str | None:
    """Why the span cannot be stored, and which span it is (its name, and its span id
    when it has one): `<why>：<span>`, so that the answer lists the spans of one reason
    together (diagnosis.otlp_views)."""
    if len(span.trace_id) != 16 or not any(span.trace_id):
        problem = "span 没有有效的 trace id（16 字节，不能全为 0）"
    elif len(span.span_id) != 8 or not any(span.span_id):
        problem = "span 没有有效的 span id（8 字节，不能全为 0）"
    elif span.parent_span_id and len(span.parent_span_id) != 8:
        problem = "span 的 parent span id 无效（应为 8 字节）"
    elif not span.start_time_unix_nano:
        problem = "span 没有开始时间"
    else:
        return None
    name = _redacted_cut(span.name, redact, 80) or "(unnamed)"
    # The span id as sent, also when it is the problem (a few bytes, no more than 8 shown).
    shown = f" {span.span_id[:8].hex()}" if span.span_id else ""
    return f"{problem}：“{name}”{shown}"


def _record(span: ProtoSpan, *, redact: Callable[[str], str], max_chars: int) -> SpanRecord:
    cut: list[str] = []
    attributes = {}
    for item in span.attributes:
        attributes[item.key] = _value(item.value, item.key, redact, max_chars, cut)
    if cut:
        attributes[TRUNCATED_ATTRIBUTE] = sorted(set(cut))
    if _parent_is_remote(span):
        attributes[REMOTE_PARENT_ATTRIBUTE] = True
    started = _time(span.start_time_unix_nano)
    # Sent without its end (0): no duration, as for an end before the start (otlp_facts).
    ended = _time(span.end_time_unix_nano) if span.end_time_unix_nano else None
    is_error = span.status.code == Status.STATUS_CODE_ERROR
    name = _redacted_cut(span.name, redact, 255)
    record = SpanRecord(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_span_id=span.parent_span_id.hex() if any(span.parent_span_id) else "",
        name=name or "(unnamed)",
        role=_role(span, attributes),
        is_error=is_error,
        started_at=started,
        ended_at=max(ended or started, started),
        attributes=attributes,
        truncated=bool(cut),
        error_message=_error_message(span, redact, max_chars) if is_error else "",
        session_hint=_identifier(span, SESSION_ATTRIBUTES),
        session_hint_unusable=_unusable_identifier(span, SESSION_ATTRIBUTES),
        user_id=_user_id(span),
        parent_is_remote=_parent_is_remote(span),
        ended_before_start=ended is None or ended < started,
    )
    if record.role == SpanRole.TOOL:
        record.tool_name = _tool_name(attributes, name)
        record.is_retriever = attributes.get("openinference.span.kind") == "RETRIEVER"
        record.arguments = _text(_first(attributes, _TOOL_ARGUMENTS))
        result_key = next((k for k in _TOOL_RESULT if attributes.get(k) not in (None, "")), None)
        record.result = _text(attributes.get(result_key)) or documents_text(attributes)
        # The hits and the level are read from the whole result as sent, not the part kept.
        if result_key in cut:
            record.whole_result = _sent_text(span, result_key)
        record.documents = documents_found(attributes, record.whole_result or record.result)
    elif record.role in (SpanRole.MODEL, SpanRole.AGENT):
        record.arguments = question_of(attributes) or ""
        record.result = answer_of(attributes) or ""
    return record


def _value(
    value: AnyValue,
    key: str,
    redact: Callable[[str], str],
    max_chars: int,
    cut: list[str],
    depth: int | None = 2,
) -> Any:
    """`value` as JSON. An array or kvlist here opens level `depth` of the stored
    attributes (2 for an attribute's value; None inside one stored as its JSON text)."""
    which = value.WhichOneof("value")
    if which == "string_value":
        # JSON's non-ASCII characters as themselves (the OpenAI Agents SDK's tool
        # arguments), before redaction reads them: a secret in escapes is no way past it.
        text, was_cut = _redacted(characters_unescaped(value.string_value), redact, max_chars)
        if was_cut:
            cut.append(key)
        return text
    if which in ("bool_value", "int_value", "double_value"):
        number = getattr(value, which)
        if which == "double_value" and number != number:  # NaN has no JSON form
            return None
        if which == "double_value" and number in (float("inf"), float("-inf")):
            return None
        return number
    if which in ("array_value", "kvlist_value") and depth is not None and depth > MAX_JSON_DEPTH:
        return json.dumps(_value(value, key, redact, max_chars, cut, None), ensure_ascii=False)
    inner = None if depth is None else depth + 1
    if which == "array_value":
        values = value.array_value.values
        return [_value(item, key, redact, max_chars, cut, inner) for item in values]
    if which == "kvlist_value":
        return {
            item.key: _value(item.value, key, redact, max_chars, cut, inner)
            for item in value.kvlist_value.values
        }
    if which == "bytes_value":
        return value.bytes_value.hex()[:max_chars]
    return None


# What is redacted of a text longer than it keeps, past the part kept: a secret the cut
# goes through is redacted whole, not left in part (AKIA and the first of its 16
# characters), while a text of megabytes is not read to its end for the few kilobytes kept.
_REDACTED_PAST_CUT = 1024


def _redacted(text: str, redact: Callable[[str], str], max_chars: int) -> tuple[str, bool]:
    """`text` redacted and cut to `max_chars`, and whether it was cut."""
    redacted = redact(text[: max_chars + _REDACTED_PAST_CUT])
    was_cut = len(redacted) > max_chars or len(text) > max_chars + _REDACTED_PAST_CUT
    return redacted[:max_chars], was_cut


def _redacted_cut(text: str, redact: Callable[[str], str], max_chars: int) -> str:
    """A span's name or error message as stored: redacted and cut, as an attribute's text."""
    return _redacted(text, redact, max_chars)[0]


def _identifier(span: ProtoSpan, keys: tuple[str, ...]) -> str | None:
    """The first of `keys` as sent, before redaction: a session id is the key its session
    is stored under (the REST API takes it as it comes), and one that happens to look like
    a phone number must not lose the trace; a user id (often an e-mail address) is who
    asked, as the REST API stores it. The attribute itself is kept redacted."""
    values = {item.key: item.value for item in span.attributes if item.key in keys}
    for key in keys:
        value = values.get(key)
        which = value.WhichOneof("value") if value is not None else None
        if which in ("string_value", "int_value"):
            text = str(getattr(value, which))
            if text:
                return text
    return None


def _user_id(span: ProtoSpan) -> str | None:
    """Who asked, stored as the REST API stores a userId: the first of USER_ATTRIBUTES that
    holds more than whitespace, as sent (see `_identifier`; its NUL characters are gone
    with every other text's, diagnosis.otlp_wire) less the whitespace around it
    (stored_text), then its first 64 characters."""
    for key in USER_ATTRIBUTES:
        text = stored_text(_identifier(span, (key,)) or "")
        if text:
            return text[:USER_ID_MAX_LENGTH]
    return None


def _unusable_identifier(span: ProtoSpan, keys: tuple[str, ...]) -> str | None:
    """The first of `keys` set to a value of a type `_identifier` cannot read (an array, a
    double, a bool, a kvlist, bytes), as `key value`, cut at 80 characters; None when
    there is none."""
    values = {item.key: item.value for item in span.attributes if item.key in keys}
    for key in keys:
        value = values.get(key)
        which = value.WhichOneof("value") if value is not None else None
        if which is None or which in ("string_value", "int_value"):
            continue
        shown = repr(_plain(value))
        return f"{key} {shown if len(shown) <= 80 else shown[:77] + '...'}"
    return None


def _plain(value: AnyValue) -> Any:
    """`value` as Python, for a message: no redaction, no cut (the caller cuts)."""
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_plain(item) for item in value.array_value.values[:20]]
    if which == "kvlist_value":
        return {item.key: _plain(item.value) for item in value.kvlist_value.values[:20]}
    return getattr(value, which) if which else None


def _sent_text(span: ProtoSpan, key: str) -> str | None:
    """The string attribute `key` as sent (the last of that key, as the stored one), or
    None when it is no string (an array's strings are cut one by one: its JSON stays
    whole)."""
    value = next((i.value for i in reversed(span.attributes) if i.key == key), None)
    if value is None or value.WhichOneof("value") != "string_value":
        return None
    return value.string_value


def _time(nanos: int) -> datetime:
    # Whole seconds and microseconds apart: nanos / 1e9 as a float rounds the microseconds,
    # so a 10 ms span could come out as 9 ms.
    seconds, rest = divmod(nanos, 1_000_000_000)
    try:
        return datetime.fromtimestamp(seconds, tz=UTC) + timedelta(microseconds=rest // 1000)
    except (OverflowError, OSError, ValueError):
        return datetime.fromtimestamp(0, tz=UTC)


def _role(span: ProtoSpan, attributes: Mapping[str, Any]) -> str:
    operation = attributes.get("gen_ai.operation.name")
    openinference = attributes.get("openinference.span.kind")
    spring_tool = "spring.ai.tool.definition.name" in attributes or (
        attributes.get("spring.ai.kind") == "tool_call"
    )
    if is_handoff(span.name, attributes):
        return SpanRole.OTHER  # no tool call (diagnosis.otlp_handoffs)
    if operation == "execute_tool" or openinference in ("TOOL", "RETRIEVER") or spring_tool:
        return SpanRole.TOOL
    if operation in _MODEL_OPERATIONS or openinference in ("LLM", "EMBEDDING"):
        return SpanRole.MODEL
    # Some converters send a root's parent id as eight zero bytes rather than none. A
    # span whose parent is remote is an agent span only when it says so: a tool endpoint's
    # server span continues the agent's trace too.
    is_root = not any(span.parent_span_id)
    if operation in _AGENT_OPERATIONS or openinference == "AGENT" or is_root:
        return SpanRole.AGENT
    return SpanRole.OTHER


@dataclass(frozen=True)
class KnownSpan:
    """What a trace's root is found by: a span of the request, or one already stored."""

    span_id: str
    parent_span_id: str
    role: str
    parent_is_remote: bool
    started_at: datetime


def root_span_id(spans: Iterable[KnownSpan]) -> str | None:
    """The root among the spans known for one trace: its span with no parent (the first
    started), whenever it has one; else the local top of the agent's run, a span whose
    parent is remote (and not among the known) with an agent span at or below it (an
    agent behind a gateway). A remote-parented span with no agent below it (a tool
    endpoint the agent called) is no root. None while neither is known."""
    known = {s.span_id: s for s in spans}
    parentless = [s for s in known.values() if not s.parent_span_id]
    if parentless:
        return min(parentless, key=lambda s: s.started_at).span_id
    tops = [_remote_top(s, known) for s in known.values() if s.role == SpanRole.AGENT]
    found = [top for top in tops if top is not None]
    return min(found, key=lambda s: s.started_at).span_id if found else None


def _remote_top(span: KnownSpan, known: Mapping[str, KnownSpan]) -> KnownSpan | None:
    """The span at or above `span` whose parent is remote and not known, if any."""
    seen = set()
    while span.span_id not in seen:
        seen.add(span.span_id)
        parent = known.get(span.parent_span_id)
        if parent is None:
            return span if span.parent_is_remote else None
        span = parent
    return None


def _parent_is_remote(span: ProtoSpan) -> bool:
    return span.flags & _REMOTE_PARENT == _REMOTE_PARENT


def _error_message(span: ProtoSpan, redact: Callable[[str], str], max_chars: int) -> str:
    for event in span.events:
        if event.name == "exception":
            values = {item.key: item.value.string_value for item in event.attributes}
            kind, message = values.get("exception.type", ""), values.get("exception.message", "")
            text = f"{kind}: {message}" if kind and message else kind or message
            if text:
                return _redacted_cut(text, redact, max_chars)
    return _redacted_cut(span.status.message, redact, max_chars) or "ERROR"


def _first(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((attributes[k] for k in keys if attributes.get(k) not in (None, "")), None)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _tool_name(attributes: Mapping[str, Any], span_name: str) -> str:
    """The tool's name as the fact keeps it, without the spaces around it (one tool in
    the catalog); "" when neither an attribute nor the span's name gives one (a span
    named `execute_tool ` by an instrumentation that knew no name)."""
    for key in _TOOL_NAME:
        value = attributes.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    name = span_name.strip()
    for operation in ("execute_tool", "tool_call"):
        if name == operation:
            return ""
        if name.startswith(operation + " "):
            return name[len(operation) :].strip()
    return name
