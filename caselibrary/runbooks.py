"""Markdown runbooks read as cases: one file, one case.

Pure Python (no Django): the import command, the admin's upload page and the tests share it.

- The title is the first level-one heading (`# ...`, or a line underlined with `===`); a
  runbook without one is refused with a `RunbookError` naming the file and the line.
- Sections are mapped to the case's fields by their heading, in Chinese and English, however
  they are cased, numbered (`1.`, `一、`, `(2)`) or ended (`:`/`：`), at any level:
  现象 / 告警描述 / 问题描述 / 症状 / symptoms / description / meaning / steps to reproduce ->
  description; 根因 / 根本原因 / 故障原因 / 可能原因 / 原因分析 / root cause / cause /
  possible causes -> root cause; 处理步骤 / 排查步骤 / 解决方案 / 解决 / 处置 / 应急预案 /
  恢复步骤 / solution / resolution / remediation / mitigation / workaround / diagnosis /
  steps -> solution. A heading that starts with a keyword maps as the keyword does, the
  longest keyword winning. Several sections of one field are joined in order. Text between
  the title and the first section belongs to the description.
- Any other section (Impact, Verification, Rollback...) is kept, by name, in
  `extra_sections`; `sections` holds every section in the order of the file (a search
  engine indexes each one as a passage). A sub-heading that maps to nothing stays inside
  its parent section's text. `case_texts` gives the case's root cause and solution, every
  section kept; `case_error_code` its one code.
- Headings inside fenced code blocks (a shell comment `# restart the pod`) are text.
- HTML comments (`<!-- ... -->`, on one line or several) are no part of the case: a
  lint directive, an owner's note or a section commented out is neither shown nor
  searched. In fenced code blocks and inline code they are text.
- Error codes and alert names come from `caselibrary.error_codes.find_error_codes`;
  `content_hash` is the SHA-256 of the normalised text (line ends, trailing spaces, a
  byte-order mark and surrounding blank lines do not change it).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from caselibrary.alert_names import find_alert_names
from caselibrary.error_codes import find_error_codes

__all__ = [
    "Runbook",
    "RunbookError",
    "case_error_code",
    "case_texts",
    "earlier_source_hashes",
    "field_for_heading",
    "parse_runbook",
    "read_runbook",
]

# The case model's limits (caselibrary.models.CaseLibrary).
TITLE_MAX_LENGTH = 255
ERROR_CODE_MAX_LENGTH = 64

FIELD_HEADINGS = {
    "description": (
        "现象",
        "告警描述",
        "问题描述",
        "症状",
        "故障现象",
        "symptoms",
        "symptom",
        "description",
        "meaning",
        "steps to reproduce",
    ),
    "root_cause": (
        "根因",
        "根本原因",
        "故障原因",
        "可能原因",
        "原因分析",
        "原因",
        "root cause",
        "cause",
        "causes",
        "possible causes",
        "possible cause",
    ),
    "solution": (
        "处理步骤",
        "排查步骤",
        "解决方案",
        "解决",
        "处置",
        "处理",
        "应急处理",
        "应急预案",
        "恢复步骤",
        "修复",
        "solution",
        "resolution",
        "remediation",
        "mitigation",
        "workaround",
        "diagnosis",
        "troubleshooting",
        "fix",
        "steps",
    ),
}
# Longest first, so that a longer heading wins over a keyword it starts with
# ("steps to reproduce" over "steps").
_KEYWORDS = sorted(
    ((keyword, name) for name, keywords in FIELD_HEADINGS.items() for keyword in keywords),
    key=lambda pair: -len(pair[0]),
)

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$|^\s{0,3}(#{1,6})[ \t]*$")
_SETEXT_ONE = re.compile(r"^\s{0,3}=+\s*$")
_NUMBERING = re.compile(
    r"^(?:step\s*)?(?:\d+(?:\.\d+)*[.)、:：]?|[一二三四五六七八九十]+[、.．]|[(（][\d一二三四五六七八九十]+[)）]"
    r"|第[一二三四五六七八九十\d]+[步章节部分]?[、:：]?)\s*",
    re.I,
)
_INLINE_CODE = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")
_SPLIT_HEADING = re.compile(r"\s*(?:/|\||／|[(（]|[)）])\s*")


class RunbookError(ValueError):
    """A runbook that cannot become a case; says which file and line.

    `message` is English, and the msgid of its translation in locale/: the import, which
    has Django, tells it in the operator's language (caselibrary/services/imports.py).
    """

    def __init__(self, source: str, line: int, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        super().__init__(f"{source}:{line}: {message}")


@dataclass
class Runbook:
    """One runbook as the case's fields, with its sections and codes."""

    source: str
    title: str
    description: str
    root_cause: str
    solution: str
    sections: list[tuple[str, str]] = field(default_factory=list)
    extra_sections: list[tuple[str, str]] = field(default_factory=list)
    error_codes: list[str] = field(default_factory=list)
    alert_names: list[str] = field(default_factory=list)
    content_hash: str = ""

    @property
    def error_code(self) -> str | None:
        """The case's one error code: the title's first, else the text's first that fits."""
        title_codes = [code for code in find_error_codes(self.title) if code in self.error_codes]
        for code in [*title_codes, *self.error_codes]:
            if len(code) <= ERROR_CODE_MAX_LENGTH:
                return code
        return None


# The version of the reading of a runbook into a case (case_texts, case_error_code). A
# runbook imported under another reading is read again at its next import, changed or
# not (2: every section kept, prometheus-operator's headings, the code from the symptoms;
# 3: HTML comments left out).
CASE_READING = 3


def case_source_hash(runbook: Runbook) -> str:
    """What an import keeps of a runbook to tell whether it changed since: its content
    under this reading."""
    return hashlib.sha256(f"{CASE_READING}:{runbook.content_hash}".encode()).hexdigest()


def earlier_source_hashes(runbook: Runbook) -> tuple[str, ...]:
    """What earlier readings kept of the same runbook (the first kept its content hash
    alone): an import that finds one of these knows the file did not change, only how it
    is read."""
    earlier = (f"{reading}:{runbook.content_hash}" for reading in range(2, CASE_READING))
    return (runbook.content_hash, *(hashlib.sha256(key.encode()).hexdigest() for key in earlier))


def case_texts(runbook: Runbook) -> tuple[str, str]:
    """The case's root cause and solution, as the import writes them and the search-quality
    evaluation reads them: the description then the root cause; the solution, then every
    other section with a text, in the order of the file, as `## heading` and its text.
    Either may be empty (the import refuses a runbook without both)."""
    root_cause = "\n\n".join(part for part in (runbook.description, runbook.root_cause) if part)
    others = [f"## {heading}\n\n{body}" for heading, body in runbook.extra_sections if body]
    solution = "\n\n".join(part for part in (runbook.solution, *others) if part)
    return root_cause, solution


def case_error_code(runbook: Runbook) -> str | None:
    """The case's one code. An alert name when the runbook is about one: the title's, else
    the first its description names (what fires), since the alert is what on-call sees and
    asks about first; an alert only named further on (a link, a see-also) is another
    runbook's. Else the runbook's error code (the title's first, else the text's first)."""
    for text in (runbook.title, runbook.description):
        alerts = [name for name in find_alert_names(text) if len(name) <= ERROR_CODE_MAX_LENGTH]
        if alerts:
            return alerts[0]
    alert_names = set(runbook.alert_names)
    title_codes = [code for code in find_error_codes(runbook.title) if code in runbook.error_codes]
    for code in [*title_codes, *runbook.error_codes]:
        if code not in alert_names and len(code) <= ERROR_CODE_MAX_LENGTH:
            return code
    return None


def normalise_text(text: str) -> str:
    """The text whose hash is the runbook's content hash."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n") + "\n"


def field_for_heading(heading: str) -> str | None:
    """The case field a section heading maps to, or None for an extra section."""
    cleaned = heading.strip().strip("*_`").strip()
    cleaned = _NUMBERING.sub("", cleaned, count=1).strip().rstrip(":：").strip().casefold()
    for part in [cleaned, *_SPLIT_HEADING.split(cleaned)]:
        part = part.strip().rstrip(":：").strip()
        if not part:
            continue
        for keyword, name in _KEYWORDS:
            if part == keyword or (
                part.startswith(keyword)
                and (not keyword.isascii() or not part[len(keyword)].isalpha())
            ):
                return name
    return None


def _truncate_title(title: str) -> str:
    if len(title) <= TITLE_MAX_LENGTH:
        return title
    cut = title[: TITLE_MAX_LENGTH - 1]
    space = cut.rfind(" ")
    if space > TITLE_MAX_LENGTH // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:，；：-") + "…"


def lines_in_code(lines: Iterable[str]) -> Iterator[tuple[int, str, bool]]:
    """(index, line, whether it is code: a fence line or inside a fenced block) of each
    line, so a heading-like line in a code sample is read as code."""
    fence: str | None = None
    for index, line in enumerate(lines):
        opener = _FENCE.match(line)
        if opener:
            marker = opener.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
        yield index, line, bool(opener) or fence is not None


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, text) of every heading outside fenced code blocks."""
    found: list[tuple[int, int, str]] = []
    for index, line, code in lines_in_code(lines):
        if code:
            continue
        atx = _ATX.match(line)
        if atx:
            level = len(atx.group(1) or atx.group(3))
            found.append((index, level, (atx.group(2) or "").strip()))
        elif (
            _SETEXT_ONE.match(line)
            and index > 0
            and lines[index - 1].strip()
            and (not found or found[-1][0] != index - 1)
        ):
            found.append((index - 1, 1, lines[index - 1].strip()))
    return found


def _body(lines: list[str], start: int, end: int) -> str:
    text = "\n".join(line for line in lines[start:end] if not _SETEXT_ONE.match(line))
    return text.strip("\n").strip()


def _without_comments(lines: list[str]) -> list[str]:
    """The lines with HTML comments blanked out (as many lines: errors keep their line
    numbers), but in fenced code blocks and inline code spans (a fence line inside a
    comment, which is rare, is taken as a fence all the same)."""
    kept: list[str] = []
    in_comment = False
    for _index, line, code in lines_in_code(lines):
        if code and not in_comment:
            kept.append(line)
            continue
        text, in_comment = _strip_comments(line, in_comment)
        kept.append(text.rstrip())
    return kept


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """One line's text outside comments, and whether a comment is still open at its end."""
    out: list[str] = []
    position = 0
    while position < len(line):
        if in_comment:
            end = line.find("-->", position)
            if end < 0:
                return "".join(out), True
            position, in_comment = end + 3, False
            continue
        code = _INLINE_CODE.search(line, position)
        start = line.find("<!--", position)
        if start < 0:
            out.append(line[position:])
            break
        if code and code.start() <= start:
            out.append(line[position : code.end()])
            position = code.end()
            continue
        out.append(line[position:start])
        position, in_comment = start + 4, True
    return "".join(out), in_comment


def _skip_front_matter(lines: list[str]) -> int:
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                return index + 1
    return 0


def parse_runbook(text: str, *, source: str) -> Runbook:
    """One Markdown runbook as a case; RunbookError (file and line) when it has no title."""
    normalised = normalise_text(text)
    # Lines as in the file (for the line numbers of errors), line ends and spaces normalised.
    unix = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = _without_comments([line.rstrip() for line in unix.split("\n")])
    first = _skip_front_matter(lines)
    headings = [heading for heading in _headings(lines) if heading[0] >= first]
    titles = [heading for heading in headings if heading[1] == 1 and heading[2]]
    if not titles:
        line = next((i + 1 for i in range(first, len(lines)) if lines[i].strip()), 1)
        raise RunbookError(source, line, "no title: a runbook starts with a '# ' heading")
    title_index = headings.index(titles[0])
    title_line = titles[0][0]
    body_start = title_line + (
        2 if title_line + 1 < len(lines) and _SETEXT_ONE.match(lines[title_line + 1]) else 1
    )

    fields: dict[str, list[str]] = {"description": [], "root_cause": [], "solution": []}
    sections: list[tuple[str, str]] = []
    extra: list[tuple[str, str]] = []
    rest = headings[title_index + 1 :]
    # A section runs to the next heading that starts one: any heading that maps to a field,
    # or an unmapped heading no deeper than the section's own.
    starts: list[tuple[int, int, str, str | None]] = []
    current_level = 0
    for index, level, heading in rest:
        name = field_for_heading(heading)
        if name is not None or not starts or level <= current_level:
            starts.append((index, level, heading, name))
            current_level = level
    intro_end = starts[0][0] if starts else len(lines)
    intro = _body(lines, body_start, intro_end)
    if intro:
        fields["description"].append(intro)
    for position, (index, _level, heading, name) in enumerate(starts):
        end = starts[position + 1][0] if position + 1 < len(starts) else len(lines)
        body = _body(lines, index + 1, end)
        sections.append((heading, body))
        if name is None:
            extra.append((heading, body))
        elif body:
            fields[name].append(body)

    title = _truncate_title(" ".join(titles[0][2].split()))
    visible = "\n".join(lines)
    return Runbook(
        source=source,
        title=title,
        description="\n\n".join(fields["description"]),
        root_cause="\n\n".join(fields["root_cause"]),
        solution="\n\n".join(fields["solution"]),
        sections=sections,
        extra_sections=extra,
        error_codes=find_error_codes(visible),
        alert_names=find_alert_names(visible),
        content_hash=hashlib.sha256(normalised.encode("utf-8")).hexdigest(),
    )


def read_runbook(path: Path, *, source: str | None = None) -> Runbook:
    """A runbook file (UTF-8, with or without a byte-order mark) parsed as a case."""
    name = source or str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        line = path.read_bytes()[: error.start].count(b"\n") + 1
        raise RunbookError(name, line, "not UTF-8 text") from error
    return parse_runbook(text, source=name)
