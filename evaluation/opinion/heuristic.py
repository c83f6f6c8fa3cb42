"""The embedded opinion provider: section and keyword detection, no network, no model.

Pure Python. Every rule is a linear scan (no pattern can backtrack badly), and at most
TEXT_LIMIT characters of the answer are read, so an answer of any size costs at most a
few milliseconds. The rules, in the order of the factors:

- has_root_cause: a root-cause marker, Chinese or English: 根因, 根本原因, 原因是/为/：,
  故障原因, 起因, 导致, 由于; "root cause", "caused by", "the cause", "because", "due to".
- has_solution: a solution marker (解决, 修复, 处理方案/方法/步骤, 措施, 建议, 方案, 步骤;
  "solution", "fix", "resolve", "workaround", "mitigate", "remediate", "recommend",
  "steps"), or actionable steps (below).
- actionable_steps: at least two list items (lines starting with "1." / "1)" / "1、" /
  "(1)" / "①" / "第一步" / "步骤1" / "Step 1", or with "-", "*", "•"), or a command line
  (a line in a code fence, or starting with "$ " / "# " followed by a command).
- cites_evidence: the answer names one of the session's tools (also without a trailing
  "Tool"/"Tools", or split at its capitals: "QueryInternalDocs", "internal docs"), or
  repeats a term of a tool's query that the user's question does not contain (so it
  came from the tool, not from the question), or uses an evidence phrase (根据文档/日志/
  监控, 文档显示, "according to the logs", "the runbook says", ...) while at least one
  tool call succeeded.
- hallucination_risk: the answer is not blank and either no tool call succeeded (every
  claim is then unsupported), or it asserts a specific that appears nowhere in the
  question or the tool facts (tool names, queries, error messages): an error code (found
  by caselibrary.error_codes), an IP address or host name (dotted, with a digit, a hyphen
  or two dots), a host:port, or a number of two or more digits or with a unit (95%,
  300ms, 8 GB). Step numbers such as "1." and times of day such as "09:05" are not
  specifics.

English markers match whole words only: "resolve" is a remedy, "AddressResolver" is not.

A rationale is stored in English, made from one of the RATIONALES templates; pages show it
in the operator's language by matching it back to its template (rationale_parts).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import cache

from caselibrary.error_codes import find_error_codes
from evaluation.opinion.base import (
    RATIONALE_MAX_CHARS,
    SOURCE_HEURISTIC,
    OpinionFactor,
    OpinionSubject,
    ToolFact,
)

# Characters of the answer that are read; the rest of a huge answer is not.
TEXT_LIMIT = 100_000
# Characters of each tool query / error message, and of the question, that are read.
FACT_TEXT_LIMIT = 4_000
# How many specifics are checked against the facts (the first ones in the answer).
SPECIFICS_LIMIT = 200

# 2: English markers match whole words; times of day are not specifics.
VERSION = "2"


def gettext_noop(message: str) -> str:
    """Marks a rationale template for the translation catalogue; it is translated where
    it is shown, not here (no Django in this module)."""
    return message


# Every rationale the heuristic writes, as a template; the stored text is one of these
# filled in. %(count)s is always a number.
RATIONALES: tuple[str, ...] = (
    BLANK := gettext_noop("the answer is blank"),
    BLANK_NO_CLAIMS := gettext_noop("a blank answer makes no claims"),
    CAUSE_NAMED := gettext_noop("names a cause: “%(quote)s”"),
    NO_CAUSE := gettext_noop("no root-cause marker (根因/原因/root cause/caused by)"),
    REMEDY := gettext_noop("offers a remedy: “%(quote)s”"),
    STEPS := gettext_noop("gives %(count)s steps"),
    NO_SOLUTION := gettext_noop("no solution marker (解决/步骤/solution/fix) nor steps"),
    LIST_ITEMS := gettext_noop("%(count)s list items"),
    COMMAND := gettext_noop("gives a command to run"),
    NOT_ACTIONABLE := gettext_noop("fewer than two list items and no command"),
    NAMES_TOOL := gettext_noop("names the tool %(tool)s"),
    REPEATS_TERM := gettext_noop("repeats “%(term)s” from a %(tool)s query"),
    REFERS := gettext_noop("refers to the evidence: “%(quote)s”"),
    NO_CITATION := gettext_noop("names no tool and repeats nothing the tools were asked"),
    NO_SUCCESS := gettext_noop("no tool call succeeded: nothing supports the answer's claims"),
    NO_CALL := gettext_noop("no tool was called: nothing supports the answer's claims"),
    UNSUPPORTED := gettext_noop("specifics no tool fact mentions: %(shown)s"),
    UNSUPPORTED_MORE := gettext_noop(
        "specifics no tool fact mentions: %(shown)s and %(more)s more"
    ),
    ALL_SUPPORTED := gettext_noop("every specific it asserts is in the question or tool facts"),
)

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@cache
def _rationale_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    patterns = []
    for template in RATIONALES:
        pieces = _PLACEHOLDER.split(template)
        regex = "".join(
            re.escape(piece)
            if n % 2 == 0
            else (rf"(?P<{piece}>\d+)" if piece in {"count", "more"} else rf"(?P<{piece}>.+?)")
            for n, piece in enumerate(pieces)
        )
        patterns.append((re.compile(regex, re.DOTALL), template))
    # Longer templates first: "... %(shown)s and %(more)s more" before "... %(shown)s".
    patterns.sort(key=lambda pair: len(pair[1]), reverse=True)
    return tuple(patterns)


def rationale_parts(rationale: str) -> tuple[str, dict[str, str]] | None:
    """The template a stored rationale was made from and what filled it in; None for a
    text this heuristic did not write (another provider's, or one cut short)."""
    for pattern, template in _rationale_patterns():
        match = pattern.fullmatch(rationale)
        if match:
            return template, match.groupdict()
    return None


# English words are matched whole (no letter on either side; a Chinese character next to
# one is fine, unlike with \b): "Resolv" inside "AddressResolver" is no remedy.
_ROOT_CAUSE = re.compile(
    r"根因|根本原因|原因(?:是|为|在于|[:：])|故障原因|问题原因|起因|导致|由于"
    r"|(?<![a-z])(?:root[\s-]?causes?|caused\s+by|the\s+cause|because|due\s+to)(?![a-z])",
    re.IGNORECASE,
)
_SOLUTION = re.compile(
    r"解决|修复|处理(?:方案|方法|步骤|办法)|措施|建议|方案|步骤|规避"
    r"|(?<![a-z])(?:solutions?|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)|resolution|workarounds?"
    r"|mitigat(?:e[sd]?|ing|ion)|remediat(?:e[sd]?|ing|ion)|recommend(?:s|ed|ing|ation)?"
    r"|steps?)(?![a-z])",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(
    r"^[ \t]*(?:"
    r"\d{1,3}[.)、．]"  # 1.  1)  1、
    r"|[(（]\d{1,3}[)）]"  # (1)  （1）
    r"|[①-⑳]"
    r"|第[一二三四五六七八九十\d]{1,3}步"
    r"|步骤\s?\d{1,3}"
    r"|step\s?\d{1,3}"
    r"|[-*•·]\s"
    r")",
    re.IGNORECASE | re.MULTILINE,
)
_COMMAND_LINE = re.compile(r"^[ \t]*(?:```|[$#][ \t]+[a-z])", re.IGNORECASE | re.MULTILINE)
_EVIDENCE_PHRASE = re.compile(
    r"根据(?:文档|日志|监控|指标|检索|知识库|手册|runbook|告警)|(?:文档|日志|监控|指标|知识库|手册)"
    r"(?:显示|表明|记录|提到|指出)|检索(?:结果|到)|查询(?:结果|到)"
    r"|according\s+to\s+the|the\s+(?:logs?|docs?|documentation|runbook|metrics?|dashboard)"
    r"\s+(?:show|shows|say|says|indicate|indicates|mention|mentions)|as\s+(?:shown|recorded)\s+in",
    re.IGNORECASE,
)

_IPV4 = r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.])"
# Dotted names: labels of letters, digits and hyphens. Which of them count as host
# names (not "e.g." or "config.yaml") is decided in _specifics.
_DOTTED = r"(?<![\w.-])[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9][a-z0-9-]{0,62}){1,8}(?::\d{1,5})?"
_HOST_PORT = r"(?<![\w.-])[a-z][a-z0-9-]{0,62}:\d{2,5}(?!\d)"
_NUMBER = (
    r"(?<![\w.])\d+(?:[.,]\d+)*"
    r"(?:\s?(?:%|ms|毫秒|秒|分钟|小时|[kmgt]i?b|[kmgt]\b|qps|rps|tps|个|台|次|条|核|倍))?"
)
# A time of day ("09:05", "14:05:30") says when, not what: read whole so that its digits
# are not taken for numbers, and skipped.
_TIME = r"(?<![\w.:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d+)?)?(?![\w:])"
_SPECIFIC = re.compile(
    f"(?P<time>{_TIME})|(?P<ip>{_IPV4})|(?P<dotted>{_DOTTED})|(?P<hostport>{_HOST_PORT})"
    f"|(?P<number>{_NUMBER})",
    re.IGNORECASE,
)
_LEADING_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_TERM = re.compile(r"[a-z0-9][a-z0-9_.:/-]{2,}|[\u3400-\u9fff]{2,}", re.IGNORECASE)
_CAPITALS = re.compile(r"[A-Z][a-z0-9]+|[A-Z]+(?![a-z])")
_TOOL_SUFFIX = re.compile(r"(?:tools?|api|service)$", re.IGNORECASE)
# Tool-query words too common to show that the answer used what the tool found.
_COMMON_TERMS = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "how",
        "what",
        "why",
        "runbook",
        "error",
        "errors",
        "issue",
        "problem",
        "service",
        "query",
        "search",
        "docs",
        "排查",
        "问题",
        "故障",
        "处理",
        "怎么",
        "如何",
        "原因",
    }
)


class HeuristicProvider:
    """Keyword and section detection over the answer, checked against the tool facts."""

    source = SOURCE_HEURISTIC
    model = "heuristic"
    version = VERSION

    def form(self, subject: OpinionSubject) -> list[OpinionFactor]:
        raw = subject.answer[:TEXT_LIMIT]
        answer = _clean(raw)
        if not answer.strip():
            return _blank_answer()
        question = _clean(subject.query[:FACT_TEXT_LIMIT])
        tools = list(subject.tools)
        # Steps are counted before and after NFKC: it turns "①" into a bare "1".
        steps = max(_steps(raw), _steps(answer))
        return [
            _root_cause(answer),
            _solution(answer, steps),
            _cites(answer, question, tools),
            _actionable(steps),
            _hallucination(answer, question, tools),
        ]


def _clean(text: str) -> str:
    # NFKC folds full-width digits and letters (５０３, ＯＲＡ) into the ASCII the patterns
    # look for; control characters other than line breaks and tabs become spaces.
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in text)


def _factor(name: str, value: bool, template: str, **params: object) -> OpinionFactor:
    rationale = template % params if params else template
    return {"name": name, "value": value, "rationale": rationale[:RATIONALE_MAX_CHARS]}


def _quote(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _blank_answer() -> list[OpinionFactor]:
    return [
        _factor("has_root_cause", False, BLANK),
        _factor("has_solution", False, BLANK),
        _factor("cites_evidence", False, BLANK),
        _factor("actionable_steps", False, BLANK),
        _factor("hallucination_risk", False, BLANK_NO_CLAIMS),
    ]


def _root_cause(answer: str) -> OpinionFactor:
    found = _ROOT_CAUSE.search(answer)
    if found:
        return _factor("has_root_cause", True, CAUSE_NAMED, quote=_quote(found.group()))
    return _factor("has_root_cause", False, NO_CAUSE)


def _steps(answer: str) -> tuple[int, bool]:
    """(list items, has a command line)."""
    return sum(1 for _ in _LIST_ITEM.finditer(answer)), bool(_COMMAND_LINE.search(answer))


def _solution(answer: str, steps: tuple[int, bool]) -> OpinionFactor:
    found = _SOLUTION.search(answer)
    if found:
        return _factor("has_solution", True, REMEDY, quote=_quote(found.group()))
    if steps[0] >= 2:
        return _factor("has_solution", True, STEPS, count=steps[0])
    return _factor("has_solution", False, NO_SOLUTION)


def _actionable(steps: tuple[int, bool]) -> OpinionFactor:
    items, command = steps
    if items >= 2:
        return _factor("actionable_steps", True, LIST_ITEMS, count=items)
    if command:
        return _factor("actionable_steps", True, COMMAND)
    return _factor("actionable_steps", False, NOT_ACTIONABLE)


def _tool_names(name: str) -> Iterator[str]:
    """Ways an answer may write a tool's name, longest first, casefolded."""
    yield name.casefold()
    stem = _TOOL_SUFFIX.sub("", name)
    if stem and stem != name:
        yield stem.casefold()
    words = _CAPITALS.findall(stem)
    if len(words) >= 2:
        # "QueryInternalDocs" -> "internal docs" (the leading verb says little).
        tail = words[1:] if words[0].casefold() in {"query", "get", "search", "fetch"} else words
        yield "".join(tail).casefold()
        yield " ".join(tail).casefold()


def _terms(text: str) -> set[str]:
    return {
        term.casefold().strip(".:/-")
        for term in _TERM.findall(text)
        if term.casefold() not in _COMMON_TERMS
    }


def _cites(answer: str, question: str, tools: list[ToolFact]) -> OpinionFactor:
    folded = answer.casefold()
    for tool in tools:
        for name in _tool_names(tool.tool_name):
            if len(name) >= 3 and name in folded:
                return _factor("cites_evidence", True, NAMES_TOOL, tool=tool.tool_name)
    asked = question.casefold()
    for tool in tools:
        if not tool.succeeded:
            continue
        for term in sorted(_terms(tool.query[:FACT_TEXT_LIMIT]), key=len, reverse=True):
            if len(term) >= 2 and term not in asked and term in folded:
                return _factor(
                    "cites_evidence", True, REPEATS_TERM, term=_quote(term), tool=tool.tool_name
                )
    phrase = _EVIDENCE_PHRASE.search(answer)
    if phrase and any(tool.succeeded for tool in tools):
        return _factor("cites_evidence", True, REFERS, quote=_quote(phrase.group()))
    return _factor("cites_evidence", False, NO_CITATION)


def _specifics(answer: str) -> Iterator[str]:
    """Checkable claims in the answer: error codes, addresses, host names, numbers."""
    yield from find_error_codes(answer)
    for match in _SPECIFIC.finditer(answer):
        text = match.group()
        kind = match.lastgroup
        if kind == "time":
            continue
        if kind == "dotted":
            labels = text.split(":")[0].split(".")
            if not (
                len(labels) >= 3
                or (
                    any(ch.isdigit() or ch == "-" for ch in text)
                    and any(ch.isalpha() for ch in text)
                )
            ):
                continue  # e.g. "config.yaml", "e.g"
            if all(label.isdigit() for label in labels):
                continue  # a decimal number, matched as a number below
        elif kind == "number":
            digits = sum(ch.isdigit() for ch in text)
            has_unit = not text[-1].isdigit()
            if digits < 2 and not has_unit:
                continue  # step numbers, "3 台" without a unit the pattern knows
        yield text


def _supported(specific: str, facts: str, fact_codes: set[str]) -> bool:
    folded = specific.casefold()
    if folded in fact_codes or folded in facts:
        return True
    # A number with a unit is supported by the bare number ("300ms" by "300").
    bare = _LEADING_NUMBER.match(folded)
    return bool(bare) and bare.group() != folded and bare.group() in facts


def _fact_text(question: str, tools: Iterable[ToolFact]) -> str:
    parts = [question]
    for tool in tools:
        parts += [
            tool.tool_name,
            tool.query[:FACT_TEXT_LIMIT],
            tool.error_message[:FACT_TEXT_LIMIT],
        ]
    return _clean("\n".join(parts)).casefold()


def _hallucination(answer: str, question: str, tools: list[ToolFact]) -> OpinionFactor:
    if not any(tool.succeeded for tool in tools):
        return _factor("hallucination_risk", True, NO_SUCCESS if tools else NO_CALL)
    facts = _fact_text(question, tools)
    fact_codes = {code.casefold() for code in find_error_codes(facts)}
    unsupported: list[str] = []
    for checked, specific in enumerate(_specifics(answer)):
        if checked >= SPECIFICS_LIMIT:
            break
        if not _supported(specific, facts, fact_codes) and specific not in unsupported:
            unsupported.append(specific)
    if unsupported:
        shown = ", ".join(_quote(s, 30) for s in unsupported[:3])
        if len(unsupported) > 3:
            return _factor(
                "hallucination_risk", True, UNSUPPORTED_MORE, shown=shown, more=len(unsupported) - 3
            )
        return _factor("hallucination_risk", True, UNSUPPORTED, shown=shown)
    return _factor("hallucination_risk", False, ALL_SUPPORTED)
