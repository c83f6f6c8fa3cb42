"""A case as passages: the parts a search matches one by one.

A one-line case is a title and two short texts; a runbook is a title and pages of
sections. Ranked as wholes, the runbook's few matching lines drown in the rest of it.
Split into passages (the title, the root cause, the solution, and each section of a long
text, cut at its Markdown headings and then at paragraphs), each part competes on its
own and a case ranks by its best part.

Pure Python: fed texts, returns texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

# A passage longer than this is cut at paragraph ends (e5 reads about 512 tokens; a
# section of this size is a screen of text).
MAX_PASSAGE_CHARS = 900
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S", re.MULTILINE)


@dataclass(frozen=True)
class Passage:
    kind: str  # title | description | root_cause | solution | section
    text: str


def case_passages(*, title: str, root_cause: str, solution: str) -> list[Passage]:
    """The passages of a case, in a stable order (their numbers are their positions).

    An automatic case holds the whole answer as both its root cause and its solution:
    that text is one passage, not two.
    """
    passages = [Passage("title", title.strip())] if title.strip() else []
    root_cause, solution = (root_cause or "").strip(), (solution or "").strip()
    parts = [("root_cause", root_cause)]
    if solution and solution != root_cause:
        parts.append(("solution", solution))
    for kind, text in parts:
        for number, chunk in enumerate(_split(text)):
            passages.append(Passage(kind if number == 0 else "section", chunk))
    return passages


def _split(text: str) -> list[str]:
    if not text:
        return []
    if len(text) <= MAX_PASSAGE_CHARS and not _HEADING.search(text):
        return [text]
    chunks: list[str] = []
    for section in _sections(text):
        chunks.extend(_by_paragraphs(section))
    return chunks


def _sections(text: str) -> list[str]:
    starts = [match.start() for match in _HEADING.finditer(text)]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    bounds = [*starts, len(text)]
    sections = [text[a:b].strip() for a, b in pairwise(bounds)]
    return [section for section in sections if section]


def _by_paragraphs(section: str) -> list[str]:
    if len(section) <= MAX_PASSAGE_CHARS:
        return [section]
    lines = section.splitlines()
    # A cut section keeps its heading in front of each piece: the piece says what it is.
    heading = lines[0] if _HEADING.match(lines[0]) else ""
    pieces: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", section):
        paragraph = paragraph.strip()
        while len(paragraph) > MAX_PASSAGE_CHARS:  # one paragraph longer than a piece
            pieces.extend(filter(None, [current]))
            current = ""
            pieces.append(paragraph[:MAX_PASSAGE_CHARS])
            paragraph = paragraph[MAX_PASSAGE_CHARS:]
        if current and len(current) + len(paragraph) + 2 > MAX_PASSAGE_CHARS:
            pieces.append(current)
            current = heading + "\n\n" + paragraph if heading else paragraph
        else:
            current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        pieces.append(current)
    return pieces
