"""What the scoring factors are called on screen, in the operator's language.

The stored names (`has_successful_tool_call`) and the rules' Chinese descriptions are the
record and never change; these labels are only how a page shows them. The Chinese labels
are the contract's descriptions (evaluation/rules.py) without the counts.
"""

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

# The rule engine's factors (evaluation/rules.py).
RULE_FACTOR_LABELS: dict[str, Promise] = {
    "execution_failed": _("execution failed"),
    "no_tool_call": _("no tool call"),
    "has_successful_tool_call": _("successful tool calls"),
    "l0_exact_match": _("L0 exact match"),
    "l1_semantic_match": _("L1 semantic match"),
    "retrieval_no_hit": _("retrieval calls without any hit"),
    "all_tool_calls_failed": _("every tool call failed"),
}

# The opinion's factors (evaluation/opinion/base.py FACTOR_NAMES).
OPINION_FACTOR_LABELS: dict[str, Promise] = {
    "has_root_cause": _("names a root cause"),
    "has_solution": _("offers a solution"),
    "cites_evidence": _("cites the evidence"),
    "actionable_steps": _("actionable steps"),
    "hallucination_risk": _("risk of hallucination"),
}

_LABELS = {**RULE_FACTOR_LABELS, **OPINION_FACTOR_LABELS}


def factor_label(name: str) -> str:
    """The label of a factor in the active language; an unknown name is shown as it is."""
    label = _LABELS.get(name)
    return str(label) if label is not None else name
