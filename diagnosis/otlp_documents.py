"""How many documents a retrieval span found, read from the span: OpenInference's
`retrieval.documents.N.*` attributes, else the tool's result when it is a JSON list (or
an object holding one under a usual key).

The result is read whole, as sent (the service cuts a long value only to store it), and
a result the agent cut itself (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) counts the documents
that arrived whole: a JSON text that reads well up to its end, where it stops in the
middle of an item, is one cut short; any other text that is no JSON counts none.
"""

import json
import re
from collections.abc import Mapping
from typing import Any

from diagnosis.otlp_messages import json_or_none

DOCUMENT_KEY = re.compile(r"\Aretrieval\.documents\.(\d+)\.")
LIST_KEYS = ("documents", "results", "hits", "items", "docs", "matches")

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
# Within what is left of an item cut short: a string (perhaps cut: no closing quote) or a
# bracket. Strings are skipped whole, so a bracket in a string is no bracket.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*("?)|[\[\]{}]', re.S)
_VALUE_START = re.compile(r'[\[{"\-0-9tfn]')
_CLOSING = {"]": "[", "}": "{"}


def documents_text(attributes: Mapping[str, Any]) -> str:
    """The retrieved documents' contents (OpenInference), one a line."""
    contents = [
        str(value)
        for key, value in attributes.items()
        if DOCUMENT_KEY.match(key) and key.endswith(".document.content")
    ]
    return "\n".join(contents)


def documents_found(attributes: Mapping[str, Any], result: str) -> int | None:
    """How many documents a retrieval found, when the span says; None when it cannot tell.
    `result` is the tool's result as sent, not cut."""
    indexes = {m.group(1) for key in attributes if (m := DOCUMENT_KEY.match(key))}
    if indexes:
        return len(indexes)
    if not result:
        return None
    parsed = json_or_none(result)
    if isinstance(parsed, list):
        return len([item for item in parsed if item not in (None, "", [], {})])
    if isinstance(parsed, dict):
        for key in LIST_KEYS:
            if isinstance(parsed.get(key), list):
                return len(parsed[key])
        return None
    return _documents_cut_short(result) if parsed is None else None


def _documents_cut_short(text: str) -> int | None:
    """The items that arrived whole of a JSON list, or of an object's list under one of
    LIST_KEYS, cut short; None when `text` is no JSON cut short."""
    start = _skip(text, 0)
    if text.startswith("[", start):
        counted = _items(text, start, skip_empty=True)
        # A list that closed is whole: the text is no JSON for another reason.
        return counted[0] if counted is not None and counted[1] is None else None
    if not text.startswith("{", start):
        return None
    at = _skip(text, start + 1)
    while at < len(text):
        try:
            key, at = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            return None
        at = _skip(text, at)
        if not isinstance(key, str) or not text.startswith(":", at):
            return None
        at = _skip(text, at + 1)
        if key in LIST_KEYS and text.startswith("[", at):
            counted = _items(text, at, skip_empty=False)
            return counted[0] if counted is not None else None
        try:
            _, at = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            return None  # cut before any list of documents
        at = _skip(text, at)
        if not text.startswith(",", at):
            return None
        at = _skip(text, at + 1)
    return None


def _items(text: str, at: int, *, skip_empty: bool) -> tuple[int, int | None] | None:
    """The whole items of the list opening at `at`, and where it closes (None when the
    text stops within it, at an item cut short or between two); None when what follows
    is no JSON."""
    count = 0
    at = _skip(text, at + 1)
    if text.startswith("]", at):
        return 0, at + 1
    while at < len(text):
        try:
            item, end = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            return (count, None) if _cut_short(text, at) else None
        if not (skip_empty and item in (None, "", [], {})):
            count += 1
        at = _skip(text, end)
        if at == len(text):
            break
        if text[at] == "]":
            return count, at + 1
        if text[at] != ",":
            return None
        at = _skip(text, at + 1)
    return count, None


def _cut_short(text: str, at: int) -> bool:
    """Whether the text from `at` to its end is the beginning of one JSON value: it opens
    as a value does, never closes a bracket it did not open, and stops within it."""
    if not _VALUE_START.match(text, at):
        return False
    if text[at] not in '[{"':
        # A literal cut short (`tru`); a number cut short reads as a number.
        rest = text[at:].rstrip()
        return any(word.startswith(rest) and word != rest for word in ("true", "false", "null"))
    opened: list[str] = []
    for token in _TOKEN.finditer(text, at):
        found = token.group(0)
        if found.startswith('"'):
            if not token.group(1):
                return token.end() == len(text)  # a string cut short: the text's end
            if not opened:
                return False  # a whole string reads as one: something else is wrong
        elif found in "[{":
            opened.append(found)
        elif not opened or opened.pop() != _CLOSING[found] or not opened:
            return False  # closed what it did not open, or closed and did not read
    return bool(opened)


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]
