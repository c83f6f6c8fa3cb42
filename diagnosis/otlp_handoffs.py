"""Handoffs between agents: spans kept in the timeline that are no tool calls.

The OpenAI Agents SDK hands a conversation from one agent to another with a handoff, and
OpenInference's processor (openinference-instrumentation-openai-agents) exports it as a
TOOL span: named `handoff to <agent>` (`handoff` when the SDK names no agent taking
over), with `input.value` the agent handing off and `output.value` the one taking over,
and no `tool.name`, which the span of every function tool carries. Handing off gathers no
evidence: such a span is stored with the role `other`, and makes no tool fact.
"""

from collections.abc import Mapping
from typing import Any

_KIND = "openinference.span.kind"


def is_handoff(name: str, attributes: Mapping[str, Any]) -> bool:
    """Whether the span (its name as sent, its attributes) is an OpenInference handoff."""
    if attributes.get(_KIND) != "TOOL" or "tool.name" in attributes:
        return False
    to_agent = attributes.get("output.value")
    if to_agent is None:
        return name == "handoff"
    return isinstance(to_agent, str) and name == f"handoff to {to_agent}"
