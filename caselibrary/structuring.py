"""Structuring a new AUTO case: its error code and fault category, proposed from its text.

Pure Python (no Django): the case service feeds it the session's question and answer and
the taxonomy's keywords; the tests feed it strings.

- error code: the first code `caselibrary.error_codes.find_error_codes` finds in the
  question, else in the answer (the question names the symptom the operator searched
  for; the answer's first code is the next best) that fits the column's 64 characters:
  a longer one is passed over, never cut (a cut code matches nothing).
- category: each category scores the number of its distinct keywords found in the
  question and the answer, case-insensitively; an ASCII keyword must stand as a word
  ("oom" is not found in "room"), a Chinese one anywhere. The highest score wins; a tie
  goes to the keyword found first in the text, then to the code's alphabetical order.
  No keyword found keeps GENERAL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from caselibrary.error_codes import find_error_codes

ERROR_CODE_MAX_LENGTH = 64
# Characters of the question / answer read: a case is structured by its opening, and a
# huge answer must not hold up the worker's pass.
QUESTION_CHARS = 4_000
ANSWER_CHARS = 20_000
METHOD_VERSION = "keywords-1"


@dataclass(frozen=True, slots=True)
class Proposal:
    fault_category: str
    error_code: str | None


def parse_keywords(text: str) -> list[str]:
    """Keywords as operators write them: separated by commas (, ，、), semicolons or lines."""
    seen: dict[str, None] = {}
    for word in re.split(r"[,，、;；\n]+", text or ""):
        word = " ".join(word.split()).casefold()
        if word:
            seen.setdefault(word, None)
    return list(seen)


def _is_word_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _first_position(text: str, word: str) -> int:
    """Where `word` first occurs in `text` (both case-folded), or -1.

    An ASCII word must stand alone (no ASCII letter, digit or _ on either side); CJK text
    has no spaces to stand between, so any occurrence counts. str.find, not a regular
    expression: an alternation of a hundred keywords costs ten times as much.
    """
    start = text.find(word)
    if not word.isascii():
        return start
    while start >= 0:
        end = start + len(word)
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if not (before and _is_word_char(before)) and not (after and _is_word_char(after)):
            return start
        start = text.find(word, start + 1)
    return -1


@dataclass(frozen=True)
class Taxonomy:
    """The categories' keywords, case-folded: (code, keywords) in code order."""

    categories: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def build(cls, categories: Iterable[tuple[str, str]]) -> Taxonomy:
        built = []
        for code, keywords in sorted(categories):
            words = tuple(parse_keywords(keywords))
            if words:
                built.append((code, words))
        return cls(categories=tuple(built))

    def category(self, text: str, *, default: str) -> str:
        folded = text.casefold()
        best: tuple[int, int, str] | None = None  # (-keywords found, first position, code)
        for code, words in self.categories:
            positions = [p for p in (_first_position(folded, w) for w in words) if p >= 0]
            if positions:
                candidate = (-len(positions), min(positions), code)
                if best is None or candidate < best:
                    best = candidate
        return best[2] if best else default


def propose(*, query: str, answer: str, taxonomy: Taxonomy, default_category: str) -> Proposal:
    query = (query or "")[:QUESTION_CHARS]
    answer = (answer or "")[:ANSWER_CHARS]
    # One pass over both: codes come in order of appearance, so the first is the
    # question's when it has one.
    codes = find_error_codes(f"{query}\n{answer}")
    code = next((code for code in codes if len(code) <= ERROR_CODE_MAX_LENGTH), None)
    category = taxonomy.category(f"{query}\n{answer}", default=default_category)
    return Proposal(fault_category=category, error_code=code)


def taxonomy_of(rows: Sequence[tuple[str, str]], *, exclude: str) -> Taxonomy:
    """The taxonomy without `exclude` (GENERAL is where no match lands, never a match)."""
    return Taxonomy.build((code, words) for code, words in rows if code != exclude)
