"""Rule-based evidence scoring for one diagnosis session.

Pure Python on purpose: the rules are checked against plain counts, so they can be
tested without a database and fed from a single aggregate query in production.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import TypedDict

SOURCE_RULE = "rule"
# The rule set's version, stamped in every result (`rules_version`, after the contract's
# keys). Bump it with any change to STOP_RULES, RULES or the counting that feeds them (the
# fact columns in evaluation/selectors.py): `rescore --outdated` then rescores exactly the
# sessions an older set scored (tests/test_rules.py fails on a change without a bump).
RULES_VERSION = 1
SCORE_MIN = 0
SCORE_MAX = 100

SESSION_SUCCESS = "SUCCESS"
SESSION_FAILED = "FAILED"
INVOCATION_SUCCESS = "SUCCESS"
INVOCATION_FAILED = "FAILED"
KIND_RETRIEVAL = "retrieval"
KIND_OTHER = "other"
MATCH_L0 = "L0"
MATCH_L1 = "L1"
MATCH_NONE = "NONE"

# The values the rules know, which are the models' choices (diagnosis.models; for sessions,
# the finished statuses): tests/test_scoring_counts.py fails when the two differ.
SESSION_STATUSES = frozenset({SESSION_SUCCESS, SESSION_FAILED})
INVOCATION_STATUSES = frozenset({INVOCATION_SUCCESS, INVOCATION_FAILED})
KINDS = frozenset({KIND_RETRIEVAL, KIND_OTHER})
MATCH_LEVELS = frozenset({MATCH_L0, MATCH_L1, MATCH_NONE, None})


@dataclass(frozen=True, slots=True)
class InvocationFacts:
    """Counts over one session's tool invocations.

    Hits only count on successful calls: a failed call's match level is not evidence.
    """

    total: int
    successful: int
    retrieval: int
    l0_hits: int
    l1_hits: int

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            # bool is an int subclass, and aggregates may come back as None or Decimal.
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{field.name} must be an int, got {value!r}")
            if value < 0:
                raise ValueError(f"{field.name} must be non-negative, got {value}")
        if self.successful > self.total:
            raise ValueError(f"successful ({self.successful}) exceeds total ({self.total})")
        if self.retrieval > self.total:
            raise ValueError(f"retrieval ({self.retrieval}) exceeds total ({self.total})")
        # A call has a single match level, so L0 and L1 hits are disjoint.
        if self.l0_hits + self.l1_hits > self.successful:
            raise ValueError(
                f"l0_hits + l1_hits ({self.l0_hits} + {self.l1_hits}) "
                f"exceeds successful ({self.successful})"
            )

    @classmethod
    def from_calls(cls, calls: Iterable[tuple[str, str, str | None]]) -> InvocationFacts:
        """Count (status, kind, match_level) tuples the way the aggregate query does."""
        total = successful = retrieval = l0_hits = l1_hits = 0
        for status, kind, match_level in calls:
            if status not in INVOCATION_STATUSES:
                raise ValueError(f"unknown invocation status: {status!r}")
            if kind not in KINDS:
                raise ValueError(f"unknown tool kind: {kind!r}")
            if match_level not in MATCH_LEVELS:
                raise ValueError(f"unknown match level: {match_level!r}")
            total += 1
            retrieval += kind == KIND_RETRIEVAL
            if status == INVOCATION_SUCCESS:
                successful += 1
                l0_hits += match_level == MATCH_L0
                l1_hits += match_level == MATCH_L1
        return cls(
            total=total,
            successful=successful,
            retrieval=retrieval,
            l0_hits=l0_hits,
            l1_hits=l1_hits,
        )


class Factor(TypedDict):
    name: str
    delta: int
    description: str


class Evaluation(TypedDict):
    evidence_score: int
    source: str
    factors: list[Factor]
    rules_version: int


def _factor(name: str, delta: int, description: str) -> Factor:
    # Key order is part of the stored JSON contract.
    return {"name": name, "delta": delta, "description": description}


@dataclass(frozen=True, slots=True)
class Rule:
    """An additive rule: when `condition` holds, `delta` is added to the score."""

    name: str
    condition: Callable[[InvocationFacts], bool]
    delta: int
    description: str | Callable[[InvocationFacts], str]

    def factor(self, facts: InvocationFacts) -> Factor:
        text = self.description if isinstance(self.description, str) else self.description(facts)
        return _factor(self.name, self.delta, text)


@dataclass(frozen=True, slots=True)
class StopRule:
    """A rule that ends evaluation with a score of 0 and itself as the only factor.

    Its condition also sees the session status, which is not an invocation fact.
    """

    name: str
    condition: Callable[[str, InvocationFacts], bool]
    description: str

    def factor(self) -> Factor:
        return _factor(self.name, 0, self.description)


STOP_RULES: tuple[StopRule, ...] = (
    # A failed run is judged as failed even when it called tools before failing.
    StopRule(
        name="execution_failed",
        condition=lambda status, facts: status == SESSION_FAILED,
        description="执行失败",
    ),
    StopRule(
        name="no_tool_call",
        condition=lambda status, facts: facts.total == 0,
        description="无任何工具调用",
    ),
)

RULES: tuple[Rule, ...] = (
    Rule(
        name="has_successful_tool_call",
        condition=lambda facts: facts.successful > 0,
        delta=30,
        description=lambda facts: f"有成功的工具调用({facts.successful}次)",
    ),
    Rule(
        name="l0_exact_match",
        condition=lambda facts: facts.l0_hits > 0,
        delta=35,
        description="L0 精确匹配命中",
    ),
    # An exact hit already proves the evidence; a semantic hit on top adds nothing.
    Rule(
        name="l1_semantic_match",
        condition=lambda facts: facts.l0_hits == 0 and facts.l1_hits > 0,
        delta=20,
        description="L1 语义匹配命中",
    ),
    Rule(
        name="retrieval_no_hit",
        condition=lambda facts: facts.retrieval > 0 and facts.l0_hits + facts.l1_hits == 0,
        delta=-10,
        description="有检索调用但无任何命中",
    ),
    # total > 0 keeps the rule honest if it is ever used without the stop rules.
    Rule(
        name="all_tool_calls_failed",
        condition=lambda facts: facts.total > 0 and facts.successful == 0,
        delta=-20,
        description="全部工具调用失败",
    ),
)


def _clamp(score: int) -> int:
    return max(SCORE_MIN, min(SCORE_MAX, score))


def evaluate(*, session_status: str, facts: InvocationFacts) -> Evaluation:
    """Score how much evidence a finished session gathered through its tool calls.

    `evidence_score` (0..100) measures evidence gathering only: whether tools ran and
    retrieval found matching knowledge. It says nothing about whether the answer is
    correct; user feedback covers that.

    Raises ValueError unless `session_status` is "SUCCESS" or "FAILED".
    """
    if session_status not in SESSION_STATUSES:
        raise ValueError(f"cannot evaluate a session with status {session_status!r}")

    for stop in STOP_RULES:
        if stop.condition(session_status, facts):
            return {
                "evidence_score": SCORE_MIN,
                "source": SOURCE_RULE,
                "factors": [stop.factor()],
                "rules_version": RULES_VERSION,
            }

    factors = [rule.factor(facts) for rule in RULES if rule.condition(facts)]
    return {
        "evidence_score": _clamp(sum(factor["delta"] for factor in factors)),
        "source": SOURCE_RULE,
        "factors": factors,
        "rules_version": RULES_VERSION,
    }


def rules_fingerprint() -> str:
    """A digest of the rule set as written (names, deltas, descriptions, conditions)."""
    import hashlib
    import inspect

    parts = []
    for rule in (*STOP_RULES, *RULES):
        description = getattr(rule, "description", "")
        parts.append(
            "|".join(
                [
                    rule.name,
                    str(getattr(rule, "delta", 0)),
                    description if isinstance(description, str) else inspect.getsource(description),
                    inspect.getsource(rule.condition).strip(),
                ]
            )
        )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
