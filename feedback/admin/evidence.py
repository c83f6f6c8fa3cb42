"""The evidence tables of a session's page (rule factors, opinion), in the operator's
language. Shared by the session and bad-case admins."""

import re
from datetime import datetime
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import display_for_value
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, ngettext
from django.utils.translation import gettext_lazy as _

from diagnosis.models import DiagnosisSession
from evaluation.factor_labels import factor_label
from evaluation.opinion.base import SOURCE_HEURISTIC, SOURCE_LLM
from evaluation.opinion.heuristic import rationale_parts
from evaluation.rules import RULES, STOP_RULES, InvocationFacts

OPINION_SOURCES = {SOURCE_HEURISTIC: _("heuristic"), SOURCE_LLM: _("language model")}

# The rules' descriptions without a count: each is its factor's Chinese label
# (evaluation/factor_labels.py), so another language shows the label.
FIXED_DESCRIPTIONS = {
    rule.name: rule.description
    for rule in (*STOP_RULES, *RULES)
    if isinstance(rule.description, str)
}
# The one with a count: its number is read, and the text taken for the rule's only when
# the rule itself writes it for that number.
_SUCCESSFUL_CALLS = next(rule for rule in RULES if rule.name == "has_successful_tool_call")
_NUMBER = re.compile(r"\d+")


def shown_rationale(rationale: str, *, source: str) -> str:
    """A stored opinion rationale in the active language.

    The heuristic stores its rationales in English, made from templates that the
    catalogue translates; any other text (a model's own words) is shown as written.
    """
    if source != SOURCE_HEURISTIC:
        return rationale
    parts = rationale_parts(rationale)
    if parts is None:
        return rationale
    template, params = parts
    return gettext(template) % params if params else gettext(template)


def shown_description(name: str, description: str) -> str:
    """A rule factor's stored description in the active language.

    The rules store it in Chinese, the API's contract (evaluation/rules.py), and the
    Chinese console shows it as stored. Another language says it again from the same
    record: the factor's label, and for successful calls their count. A text the current
    rules do not write (an older rule set's) is shown as stored.
    """
    if (get_language() or "").startswith("zh"):
        return description
    if FIXED_DESCRIPTIONS.get(name) == description:
        return factor_label(name)
    count = _successful_calls(name, description)
    if count is not None:
        return ngettext(
            "%(count)d successful tool call", "%(count)d successful tool calls", count
        ) % {"count": count}
    return description


def _successful_calls(name: str, description: str) -> int | None:
    """The count in has_successful_tool_call's description, if the rule wrote it."""
    number = _NUMBER.search(description)
    if name != _SUCCESSFUL_CALLS.name or number is None:
        return None
    count = int(number.group())
    facts = InvocationFacts(total=count, successful=count, retrieval=0, l0_hits=0, l1_hits=0)
    return count if _SUCCESSFUL_CALLS.description(facts) == description else None


def _factor_name(name: str) -> SafeString:
    # The label in the active language; the stored name stays at hand for those who
    # grep logs or the API for it.
    return format_html('<span class="factor-name" title="{}">{}</span>', name, factor_label(name))


def _yes_no(value: Any) -> str:
    if value is True:
        return str(_("yes"))
    if value is False:
        return str(_("no"))
    return ""


def _signed(delta: Any) -> str:
    if isinstance(delta, int) and delta > 0:
        return f"+{delta}"
    if isinstance(delta, int) and delta < 0:
        return f"−{-delta}"
    return str(delta if delta is not None else "")


def _opinion_caption(opinion: dict[str, Any]) -> str:
    """Who formed the opinion, which version of it, and when, each said once: the
    heuristic is both the opinion's source and its "model"."""
    source = str(opinion.get("source", ""))
    model = str(opinion.get("model") or "")
    version = str(opinion.get("version") or "")
    parts = [str(OPINION_SOURCES.get(source, source))]
    if model and model != source:
        parts.append(model)
    if version:
        parts.append(f"{_('version')} {version}")
    parts.append(_shown_time(opinion.get("created_at")))
    return " · ".join(part for part in parts if part)


def _shown_time(stored: Any) -> str:
    """A stored ISO 8601 time as the admin shows its own times (local, in the operator's
    format); anything else as stored."""
    try:
        moment = datetime.fromisoformat(str(stored))
    except ValueError:
        return str(stored or "")
    return str(display_for_value(moment, ""))


class EvidenceTablesMixin:
    """Detail fields `factors_table` and `opinion_table` for a session admin."""

    @admin.display(description=_("scored factors"))
    def factors_table(self, obj: DiagnosisSession) -> SafeString:
        factors = [
            f for f in (obj.self_evaluation or {}).get("factors") or [] if isinstance(f, dict)
        ]
        if not factors:
            return format_html("<em>{}</em>", _("not scored yet"))
        rows = format_html_join(
            "",
            '<tr><td>{}</td><td class="delta">{}</td><td>{}</td></tr>',
            (
                (
                    _factor_name(str(f.get("name", ""))),
                    _signed(f.get("delta")),
                    shown_description(str(f.get("name", "")), str(f.get("description", ""))),
                )
                for f in factors
            ),
        )
        return format_html(
            '<table class="factors"><thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            _("factor"),
            _("delta"),
            _("description"),
            rows,
        )

    @admin.display(description=_("opinion"))
    def opinion_table(self, obj: DiagnosisSession) -> SafeString:
        """The opinion's factors (self_evaluation.llm_opinion) beside the rule factors."""
        opinion = (obj.self_evaluation or {}).get("llm_opinion")
        if not isinstance(opinion, dict):
            return format_html("<em>{}</em>", _("no opinion yet"))
        source = str(opinion.get("source", ""))
        factors = [f for f in opinion.get("factors") or [] if isinstance(f, dict)]
        rows = format_html_join(
            "",
            '<tr><td>{}</td><td class="opinion-value">{}</td><td>{}</td></tr>',
            (
                (
                    _factor_name(str(f.get("name", ""))),
                    _yes_no(f.get("value")),
                    shown_rationale(str(f.get("rationale", "")), source=source),
                )
                for f in factors
            ),
        )
        return format_html(
            '<table class="factors opinion"><caption>{}</caption>'
            "<thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>{}</tbody></table>",
            _opinion_caption(opinion),
            _("factor"),
            _("value"),
            _("rationale"),
            rows,
        )
