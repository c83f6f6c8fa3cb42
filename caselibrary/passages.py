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
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from caselibrary.error_codes import error_code_key, find_error_codes
from caselibrary.search_text import normalise_text, search_terms, text_key

# A passage longer than this is cut at paragraph ends (e5 reads about 512 tokens; a
# section of this size is a screen of text).
MAX_PASSAGE_CHARS = 900
# Of each text of a case, the first this many characters are indexed: as much as
# `POST /api/cases` takes of a field (caselibrary/case_input.py). An automatic case holds
# the whole answer, which may be far longer (4,000,000 characters took the indexer minutes
# and held every case behind it); the case keeps its full text.
INDEXED_CHARS = 200_000
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S", re.MULTILINE)


@dataclass(frozen=True)
class Passage:
    kind: str  # title | description | root_cause | solution | section
    text: str


@dataclass(frozen=True)
class Planned:
    """A passage the index holds: its number is its position among the case's passages."""

    number: int
    kind: str
    text: str
    terms: str


def case_plan(
    title: str,
    root_cause: str,
    solution: str,
    error_code: str | None,
    merged: Iterable[tuple[str, str, str, str | None]] = (),
    questions: Iterable[str] = (),
) -> tuple[list[Planned], list[str]]:
    """What the index holds of a case: its passages with a search term, and its exact
    keys. The cases `merged` into it (their title, root cause, solution and error code)
    add their passages as sections and their keys. `questions`: the questions whose
    answers made the case (and those merged into it), each whole an exact key like a
    title: the title keeps a question's first 100 characters only, and a long question
    asked again word for word was no exact hit on the case its own answer made."""
    parts = case_passages(title=title, root_cause=root_cause, solution=solution)
    keys = exact_keys(title=title, error_code=error_code)
    keys += [f"title:{text_key(q)}" for q in questions if normalise_text(q)]
    for m_title, m_cause, m_solution, m_code in merged:
        parts += [
            Passage("section", p.text)
            for p in case_passages(title=m_title, root_cause=m_cause, solution=m_solution)
        ]
        keys += exact_keys(title=m_title, error_code=m_code)
    planned = []
    for number, passage in enumerate(parts):
        # A passage without one search term ("t", "…", a bare number) says nothing a
        # question could match; embedded, a one-letter text sat close to every short
        # question and was offered for "hello" and "🔥🔥🔥".
        if terms := search_terms(passage.text):
            planned.append(Planned(number, passage.kind, passage.text, terms))
    return planned, list(dict.fromkeys(keys))


def exact_keys(*, title: str, error_code: str | None) -> list[str]:
    """The L0 keys of a case: its error code, the codes and alert names in its title, its
    normalised title."""
    codes = ([error_code] if error_code else []) + find_error_codes(title)
    keys = [f"code:{error_code_key(code)}" for code in codes]
    # A title with no letter or digit (a deleted or merged case is planned with none) has
    # no key: all such titles would share one, and match each other.
    if normalise_text(title):
        keys.append(f"title:{text_key(title)}")
    return list(dict.fromkeys(key[:128] for key in keys))


def embedding_input(title: str, kind: str, text: str) -> str:
    """What a passage's vector is made of: a part of a case says more with its title."""
    return text if kind == "title" else f"{title}\n{text}"


def case_passages(*, title: str, root_cause: str, solution: str) -> list[Passage]:
    """The passages of a case, in a stable order (their numbers are their positions).

    An automatic case holds the whole answer as both its root cause and its solution:
    that text is one passage, not two. Of each text, its first INDEXED_CHARS characters.
    """
    title = title[:INDEXED_CHARS].strip()
    passages = [Passage("title", title)] if title else []
    root_cause = (root_cause or "")[:INDEXED_CHARS].strip()
    solution = (solution or "")[:INDEXED_CHARS].strip()
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
