"""An agent's answer read as a case's root cause and solution, for the case an operator
makes from a session (caselibrary.selectors.case_draft_from_session). The AUTO case made
on `useful` feedback takes the whole answer as both, as SPEC §4 says, and never comes here.

Pure Python (no Django). The headings, their words and the code fences are the runbooks'
(caselibrary/runbooks.py), with the words agents write besides (ANSWER_WORDS).

- A section starts at a Markdown heading (`## 根因`, `### 2. Solution`) or at a line led by
  a label and a colon (`根因分析：`, `**Root cause:**`; text may follow on that line). A
  label must be one of the words exactly, however cased, so a sentence with a colon
  ("原因在于连接池配置过小：…") starts nothing; a heading maps as a runbook's does.
- Only root-cause and solution sections start one: any other heading or label
  (`## 参考资料`, `说明：`) is text of the section it is in, and the text before the first
  section belongs to the root cause. Several sections of one field are joined in order.
- Lines inside fenced code blocks are text.
- An answer is split only when it has a section of each, neither field empty; otherwise
  `split_answer` says None and the caller keeps the whole answer in both fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The runbook parser's own patterns: one reading of Markdown for runbooks and answers.
from caselibrary.runbooks import (
    _ATX,
    _NUMBERING,
    FIELD_HEADINGS,
    field_for_heading,
    lines_in_code,
)

__all__ = ["ANSWER_WORDS", "AnswerSections", "split_answer"]

ROOT_CAUSE = "root_cause"
SOLUTION = "solution"

# Words answers head their sections with that runbooks do not (FIELD_HEADINGS has the rest).
ANSWER_WORDS = {
    ROOT_CAUSE: (
        "根因分析",
        "根本原因",
        "问题原因",
        "故障原因",
        "直接原因",
        "root causes",
        "root cause analysis",
        "likely cause",
        "probable cause",
        "possible cause",
        "possible causes",
    ),
    SOLUTION: (
        "处理建议",
        "修复建议",
        "解决建议",
        "处置建议",
        "建议",
        "处理方案",
        "修复方案",
        "解决方法",
        "解决办法",
        "处理方法",
        "修复步骤",
        "解决步骤",
        "操作步骤",
        "处理措施",
        "solutions",
        "fixes",
        "workaround",
        "recommendation",
        "recommendations",
        "recommended steps",
        "recommended actions",
        "suggested fix",
        "suggested steps",
        "next steps",
    ),
}
_WORDS = {
    word: name
    for name in (ROOT_CAUSE, SOLUTION)
    for word in (*FIELD_HEADINGS[name], *ANSWER_WORDS[name])
}
# `label：rest`, the label perhaps in bold or italics (`**根因：**`, `**根因**：`). Neither
# a colon nor emphasis inside the label: `https://…` or `a*b: c` are not labels.
_LABEL = re.compile(
    r"^[ \t]{0,3}(?P<em>\*\*|__|\*|_)?(?P<label>[^\n:：*_`]{1,40}?)[ \t]*"
    r"(?:(?P=em)[ \t]*[:：]|[:：](?:[ \t]*(?P=em))?)[ \t]*(?P<rest>.*)$"
)


@dataclass(frozen=True, slots=True)
class AnswerSections:
    root_cause: str
    solution: str


def _word(text: str) -> str | None:
    """The field a label names, exactly one of the words."""
    return _WORDS.get(" ".join(text.strip(" \t*_`:：").split()).casefold())


def _heading_field(heading: str) -> str | None:
    name = field_for_heading(heading)
    if name is None:
        # The runbooks' words are matched there, numbered or not; the answers' here.
        name = _word(_NUMBERING.sub("", heading.strip().strip("*_`").strip(), count=1))
    return name if name in (ROOT_CAUSE, SOLUTION) else None


def _section_start(line: str) -> tuple[str, str] | None:
    """(field, text on the line after the label) when `line` starts a section."""
    heading = _ATX.match(line)
    if heading:
        name = _heading_field(heading.group(2) or "")
        return (name, "") if name else None
    label = _LABEL.match(line)
    if label:
        name = _word(label.group("label"))
        if name:
            return name, label.group("rest")
    return None


def split_answer(answer: str) -> AnswerSections | None:
    """The answer's root-cause and solution sections, or None when it lacks either."""
    text = (answer or "").replace("\r\n", "\n").replace("\r", "\n")
    parts: dict[str, list[str]] = {ROOT_CAUSE: [], SOLUTION: []}
    current = ROOT_CAUSE  # until a section starts: the text before the first
    body: list[str] = []
    found: set[str] = set()
    for _index, line, code in lines_in_code(line.rstrip() for line in text.split("\n")):
        start = None if code else _section_start(line)
        if start is None:
            body.append(line)
            continue
        parts[current].append("\n".join(body).strip())
        current, body = start[0], [start[1]]
        found.add(current)
    parts[current].append("\n".join(body).strip())
    root_cause = "\n\n".join(part for part in parts[ROOT_CAUSE] if part)
    solution = "\n\n".join(part for part in parts[SOLUTION] if part)
    if found != {ROOT_CAUSE, SOLUTION} or not root_cause or not solution:
        return None
    return AnswerSections(root_cause=root_cause, solution=solution)
