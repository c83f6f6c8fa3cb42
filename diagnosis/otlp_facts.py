"""From a tool span to the tool-invocation object of the REST API's shape.

The object is checked by the same validator the REST API uses
(diagnosis.serializers.tool_invocation_checked). The hints a span may carry
(`diagnosis.tool.kind`, `diagnosis.match_level`, `diagnosis.hit_count`) are read first,
as well as they can be: a choice in another case ("l0", "RETRIEVAL"), a count sent as an
integral double (3.0) or as a string of digits. A hint that still makes no sense, or a
match level on a call that has none (a failed or non-retrieval call), is ignored: the fact
is derived as if it were absent, and the reason is returned to be told to the exporter.
One wrongly typed attribute must not lose the call from the evidence; nor a clock that
makes no sense (a span ending before it started, or lasting past the INT column's
2147483647 ms): the call is stored without a duration, and the reason told alike.
"""

import re
from dataclasses import dataclass, field
from typing import Any

from diagnosis.facts_rules import (
    INT_MAX,
    MATCH_LEVELS,
    TOOL_KINDS,
    Allowed,
    count_problems,
    match_level_problem,
)
from diagnosis.models import LevelRule, ToolCatalogEntry, ToolKind
from diagnosis.otlp_mapping import SpanRecord

KIND_ATTRIBUTE = "diagnosis.tool.kind"
LEVEL_ATTRIBUTE = "diagnosis.match_level"
HITS_ATTRIBUTE = "diagnosis.hit_count"


@dataclass
class ToolFacts:
    body: dict[str, Any]
    ignored: list[str] = field(default_factory=list)  # one reason per hint ignored


def tool_facts_body(record: SpanRecord, entry: ToolCatalogEntry | None) -> ToolFacts:
    """The tool-invocation object for a tool span, and the hints it ignored (with why)."""
    attributes = record.attributes
    ignored: list[str] = []
    status = "FAILED" if record.is_error else "SUCCESS"
    kind = _choice(attributes, KIND_ATTRIBUTE, TOOL_KINDS, ignored)
    if kind is None:
        if record.is_retriever:
            kind = ToolKind.RETRIEVAL.value  # the span says so, whatever the catalog held
        elif entry is not None:
            kind = entry.kind
        else:
            kind = ToolKind.OTHER.value
    hits = _hits(attributes, ignored)
    if hits is None:
        hits = record.documents or 0
        if record.documents is None and status == "SUCCESS" and kind == ToolKind.RETRIEVAL:
            hits = text_documents(record.whole_result or record.result, entry)
    level = _choice(attributes, LEVEL_ATTRIBUTE, MATCH_LEVELS, ignored)
    if level is not None and match_level_problem(status=status, kind=kind, match_level=level):
        why = (
            "失败的调用没有匹配级别"
            if status != "SUCCESS"
            else f"只有检索调用才有匹配级别（该调用的类型是 {kind}；设 {KIND_ATTRIBUTE}="
            "retrieval，或在工具目录中标为检索）"
        )
        ignored.append(f"忽略 {LEVEL_ATTRIBUTE} {level!r}：{why}")
        level = None
    body: dict[str, Any] = {
        "invocationId": record.span_id,
        "toolName": record.tool_name,
        "kind": kind,
        "status": status,
        "hitCount": hits,
        "query": record.arguments or None,
        "errorMessage": record.error_message or None,
        "durationMs": _duration(record, ignored),
    }
    if level is not None:
        body["matchLevel"] = level
    elif status == "SUCCESS" and kind == ToolKind.RETRIEVAL:
        body["matchLevel"] = _level(record, entry, hits)
    return ToolFacts(body, ignored)


def text_documents(result: str, entry: ToolCatalogEntry | None) -> int:
    """The documents of a successful retrieval call whose result the service could not
    count them in (no JSON list): one when its catalog entry says a text result is one
    document and the result is not blank, else none."""
    one = entry is not None and entry.text_is_one_document and bool(result.strip())
    return 1 if one else 0


def _duration(record: SpanRecord, ignored: list[str]) -> int | None:
    """The call's duration in ms: none (null, with why) when the span's clock makes no
    sense, rather than a fact the REST validator refuses, which would lose the call."""
    if record.ended_before_start:
        ignored.append("结束时间早于开始时间（时钟有误？），未记录时长（durationMs 为空）")
        return None
    if record.duration_ms > INT_MAX:
        ignored.append(
            f"时长 {record.duration_ms} ms 超过上限 {INT_MAX} ms（约 24.8 天，时钟有误？），"
            "未记录时长（durationMs 为空）"
        )
        return None
    return record.duration_ms


def hint_read(key: str, value: Any) -> str | int | None:
    """A hint's value as tool_facts_body reads it (a choice in its own case, a count as an
    integer); None when it reads none there."""
    if key == HITS_ATTRIBUTE:
        return _hits({key: value}, [])
    return _choice({key: value}, key, TOOL_KINDS if key == KIND_ATTRIBUTE else MATCH_LEVELS, [])


def _choice(
    attributes: dict[str, Any], key: str, allowed: Allowed, ignored: list[str]
) -> str | None:
    """A choice hint, read whatever its case and the spaces around it; None when absent or
    not one of `allowed` (then said in `ignored`)."""
    if key not in attributes:
        return None
    value = attributes[key]
    if isinstance(value, str):
        by_case = {choice.casefold(): choice for choice in allowed.order}
        choice = by_case.get(value.strip().casefold())
        if choice is not None:
            return choice
    ignored.append(f"忽略 {key} {_shown(value)}：应为 {allowed.listed} 之一（不分大小写）")
    return None


def _hits(attributes: dict[str, Any], ignored: list[str]) -> int | None:
    """The hit-count hint: an integer, an integral double (3.0: "a number" in some SDKs'
    eyes) or a string of digits (some exporters set every attribute as a string)."""
    if HITS_ATTRIBUTE not in attributes:
        return None
    value = attributes[HITS_ATTRIBUTE]
    count = value
    if isinstance(value, float) and value.is_integer():
        count = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        # Past INT_MAX's ten digits it is no count; int() of over 4300 digits would raise.
        digits = value.strip().lstrip("0") or "0"
        count = int(digits) if len(digits) <= len(str(INT_MAX)) else INT_MAX + 1
    if count_problems(count):
        # The value as sent (1e+300, not the 301 digits of int(1e300)).
        ignored.append(f"忽略 {HITS_ATTRIBUTE} {_shown(value)}：应为 0 到 {INT_MAX} 的整数")
        return None
    return count


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _level(record: SpanRecord, entry: ToolCatalogEntry | None, hits: int) -> str:
    rule = entry.level_rule if entry is not None else LevelRule.HITS
    if rule == LevelRule.NONE:
        return "NONE"
    if rule == LevelRule.CODE and entry is not None and entry.code_pattern:
        try:
            # The whole result as sent: a code past the part stored is found too.
            if re.search(entry.code_pattern, record.whole_result or record.result):
                return "L0"
        except re.error:
            pass  # the admin form checks the pattern; a bad one stored earlier reads no code
    return "L1" if hits > 0 else "NONE"
