"""The opinion layer: a second look at a scored session's answer.

The rule score (`evaluation/rules.py`) judges how the agent gathered evidence; an opinion
judges the answer itself (does it name a root cause, give steps, refer to what the tools
found, claim things no tool fact supports). Providers are pure of Django: plain facts in,
factors out. `evaluation/services.py` loads the facts and writes the result.
"""

from evaluation.opinion.base import (
    FACTOR_NAMES,
    OpinionError,
    OpinionFactor,
    OpinionMalformed,
    OpinionProvider,
    OpinionRefused,
    OpinionSubject,
    OpinionUnreachable,
    ToolFact,
    opinion_document,
    validate_factors,
)

__all__ = [
    "FACTOR_NAMES",
    "OpinionError",
    "OpinionFactor",
    "OpinionMalformed",
    "OpinionProvider",
    "OpinionRefused",
    "OpinionSubject",
    "OpinionUnreachable",
    "ToolFact",
    "opinion_document",
    "validate_factors",
]
