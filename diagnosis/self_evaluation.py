"""A stored self_evaluation rebuilt in the key order of the contract (SPEC §3), for
everything that hands it out: the API and the bad-case exports.

The database may give the keys back in another order than they were written in: MySQL
8's native JSON sorts an object's keys by length (`factors` before `evidence_score`), and
a row of an adopted database may hold them in any order. MariaDB and SQLite keep them.
The order is the contract's, so it is restored here rather than trusted to storage.
"""

from typing import Any

# The rule part (evidence_score, source, factors), then what the service adds after it:
# the version of the rules that scored it, then the opinion (evaluation/services.py).
EVALUATION_KEYS = ("evidence_score", "source", "factors", "rules_version", "llm_opinion")
RULE_FACTOR_KEYS = ("name", "delta", "description")
# The opinion (evaluation/opinion/base.py opinion_document) and its factors.
OPINION_KEYS = ("source", "model", "version", "factors", "created_at")
OPINION_FACTOR_KEYS = ("name", "value", "rationale")


def in_contract_order(evaluation: Any) -> Any:
    """`evaluation` with its keys, its factors' and its opinion's in the contract's order;
    a key the contract does not name follows the named ones, in the order of its name (so
    the same whatever order storage gave). Anything but an object is returned as is."""
    if not isinstance(evaluation, dict):
        return evaluation
    ordered = _ordered(evaluation, EVALUATION_KEYS)
    if "factors" in ordered:
        ordered["factors"] = _each_ordered(ordered["factors"], RULE_FACTOR_KEYS)
    opinion = ordered.get("llm_opinion")
    if isinstance(opinion, dict):
        opinion = _ordered(opinion, OPINION_KEYS)
        if "factors" in opinion:
            opinion["factors"] = _each_ordered(opinion["factors"], OPINION_FACTOR_KEYS)
        ordered["llm_opinion"] = opinion
    return ordered


def _ordered(obj: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    named = {key: obj[key] for key in keys if key in obj}
    others = {key: obj[key] for key in sorted(obj) if key not in named}
    return {**named, **others}


def _each_ordered(items: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(items, list):
        return items
    return [_ordered(item, keys) if isinstance(item, dict) else item for item in items]
