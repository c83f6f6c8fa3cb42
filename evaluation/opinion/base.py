"""What every opinion provider takes and gives, and the checks on what it gives.

Pure Python (no Django): the providers, the service and the tests share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypedDict

# The five factors of the stored format, in this order. Every value is a boolean, so
# "sessions with vs without factor X" is always "value true vs false".
FACTOR_NAMES: tuple[str, ...] = (
    "has_root_cause",
    "has_solution",
    "cites_evidence",
    "actionable_steps",
    "hallucination_risk",
)

SOURCE_LLM = "llm"
SOURCE_HEURISTIC = "heuristic"
# Rationales are for people reading the admin: a sentence, not an essay.
RATIONALE_MAX_CHARS = 300


class OpinionError(Exception):
    """An opinion could not be formed; nothing is stored."""


class OpinionRefused(OpinionError):
    """The provider declined to answer (a refusal, a content filter)."""


class OpinionMalformed(OpinionError):
    """The provider answered something that is not a valid opinion."""


class OpinionUnreachable(OpinionError):
    """The request never reached the provider (connection refused, connect timeout, a
    name that does not resolve): no call was made."""


@dataclass(frozen=True, slots=True)
class ToolFact:
    """One tool invocation as the opinion sees it (texts may be cut short)."""

    tool_name: str
    status: str
    match_level: str | None = None
    query: str = ""
    error_message: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status == "SUCCESS"


@dataclass(frozen=True, slots=True)
class OpinionSubject:
    """A finished session: the question, the answer, and its tool facts."""

    query: str
    answer: str
    tools: Sequence[ToolFact] = field(default_factory=tuple)


class OpinionFactor(TypedDict):
    name: str
    value: bool
    rationale: str


class Opinion(TypedDict):
    source: str
    model: str
    version: str
    factors: list[OpinionFactor]
    created_at: str


class OpinionProvider(Protocol):
    """Forms the five factors for one session. Raises OpinionError when it cannot."""

    source: str  # "llm" or "heuristic", stored as the opinion's source
    model: str
    version: str

    def form(self, subject: OpinionSubject) -> list[OpinionFactor]: ...


def validate_factors(raw: Any) -> list[OpinionFactor]:
    """The five factors in their fixed order, or OpinionMalformed saying what is wrong.

    Accepts a list of {"name", "value", "rationale"} objects, each name exactly once; the
    value must be a JSON boolean (not "true", not 1). A rationale is trimmed to
    RATIONALE_MAX_CHARS; a missing one is an error (an unexplained verdict is no help).
    """
    if not isinstance(raw, list):
        raise OpinionMalformed("factors is not a list")
    found: dict[str, OpinionFactor] = {}
    for item in raw:
        if not isinstance(item, dict):
            raise OpinionMalformed("a factor is not an object")
        name, value, rationale = item.get("name"), item.get("value"), item.get("rationale")
        if name not in FACTOR_NAMES:
            raise OpinionMalformed(f"unknown factor {str(name)[:40]!r}")
        if name in found:
            raise OpinionMalformed(f"factor {name} given twice")
        if not isinstance(value, bool):
            raise OpinionMalformed(f"factor {name}: value is not a boolean")
        if not isinstance(rationale, str) or not rationale.strip():
            raise OpinionMalformed(f"factor {name}: no rationale")
        found[name] = {
            "name": name,
            "value": value,
            "rationale": rationale.strip()[:RATIONALE_MAX_CHARS],
        }
    missing = [name for name in FACTOR_NAMES if name not in found]
    if missing:
        raise OpinionMalformed(f"missing factors: {', '.join(missing)}")
    return [found[name] for name in FACTOR_NAMES]


def opinion_document(
    *, provider: OpinionProvider, factors: list[OpinionFactor], created_at: datetime
) -> Opinion:
    """The stored `llm_opinion` object, keys in the order of the shared format."""
    return {
        "source": provider.source,
        "model": provider.model,
        "version": provider.version,
        "factors": validate_factors(factors),
        "created_at": created_at.isoformat(),
    }
