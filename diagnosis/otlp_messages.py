"""The user's question and the agent's answer in a span's attributes, in each message
dialect the OTLP mapping reads (the GenAI conventions' message lists, pydantic-ai's,
OpenInference's flattened `llm.*_messages`, and plain `input.value` / `output.value`)."""

import json
from collections.abc import Iterator, Mapping
from typing import Any

_INPUT_MESSAGES_READ = 50  # OpenInference's llm.input_messages.N, the first ones
# The keys read here: a span keeps them however many others it sends (otlp_limits).
KEYS_READ = (
    "gen_ai.input.messages",
    "pydantic_ai.all_messages",
    "input.value",
    "gen_ai.prompt",
    "final_result",
    "gen_ai.output.messages",
    "output.value",
    "gen_ai.completion",
    "llm.output_messages.0.message.content",
    *(
        f"llm.input_messages.{index}.message.{part}"
        for index in range(_INPUT_MESSAGES_READ)
        for part in ("role", "content")
    ),
)


def question_of(attributes: Mapping[str, Any]) -> str | None:
    """The user's first message in a span's input, in any dialect this module reads."""
    for key in ("gen_ai.input.messages", "pydantic_ai.all_messages"):
        text = _message_text(attributes.get(key), role="user", first=True)
        if text:
            return text
    for index in range(0, _INPUT_MESSAGES_READ):
        role = attributes.get(f"llm.input_messages.{index}.message.role")
        if role is None:
            break
        if role == "user":
            content = attributes.get(f"llm.input_messages.{index}.message.content")
            if content:
                return str(content)
    value = attributes.get("input.value") or attributes.get("gen_ai.prompt")
    if isinstance(value, str) and value:
        parsed = json_or_none(value)
        if isinstance(parsed, list):
            return _message_text(parsed, role="user", first=True)
        if attributes.get("openinference.span.kind") in ("AGENT", "CHAIN", None):
            return value
    return None


def answer_of(attributes: Mapping[str, Any]) -> str | None:
    """The assistant's final text in a span's output."""
    final = attributes.get("final_result")
    if isinstance(final, str) and final:
        return final
    text = _message_text(attributes.get("gen_ai.output.messages"), role="assistant", first=False)
    if text:
        return text
    content = attributes.get("llm.output_messages.0.message.content")
    if content:
        return str(content)
    value = attributes.get("output.value") or attributes.get("gen_ai.completion")
    if isinstance(value, str) and value:
        parsed = json_or_none(value)
        if isinstance(parsed, list):
            return _message_text(parsed, role="assistant", first=False)
        return value
    return None


def json_or_none(text: str) -> Any:
    """`text` parsed as JSON, or None when it is not JSON (or nested past what the parser
    follows: the text is the caller's, a question or a tool's result)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


# json.dumps's two spacings: its default and the compact one.
_SEPARATORS = ((", ", ": "), (",", ":"))


def characters_unescaped(text: str) -> str:
    """A JSON document whose non-ASCII characters are written as \\u escapes, as json.dumps
    writes them by default (the OpenAI Agents SDK's tool arguments), with those characters
    as themselves: the same document, written alike otherwise (escapes of control
    characters stay, as JSON writes them). Any other text is returned as it is: no JSON,
    JSON that json.dumps would write otherwise (other spacing, an escaped ASCII character,
    uppercase hex), and a lone surrogate, which is no character to store."""
    if "\\u" not in text:
        return text
    parsed = json_or_none(text)
    for separators in _SEPARATORS:
        try:
            if json.dumps(parsed, separators=separators) != text:
                continue
            plain = json.dumps(parsed, separators=separators, ensure_ascii=False)
            plain.encode("utf-8")  # a lone surrogate cannot be
        except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
            return text
        return plain
    return text


def _message_text(messages: Any, *, role: str, first: bool) -> str | None:
    if isinstance(messages, str):
        messages = json_or_none(messages)
    if not isinstance(messages, list):
        return None
    found = None
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != role:
            continue
        text = "".join(_parts_text(message))
        if text:
            if first:
                return text
            found = text
    return found


def _parts_text(message: Mapping[str, Any]) -> Iterator[str]:
    content = message.get("content")
    if isinstance(content, str):
        yield content
    parts = message.get("parts")
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and part.get("type") == "text" and part.get("content"):
            yield str(part["content"])
