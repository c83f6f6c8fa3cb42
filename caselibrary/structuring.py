"""Structuring a new AUTO case: its error code and fault category, proposed from its text.

Pure Python (no Django): the case service feeds it the session's question and answer and
the taxonomy's keywords; the tests feed it strings.

- error code: the first code `caselibrary.error_codes.find_error_codes` finds in the
  question, else in the answer (the question names the symptom the operator searched
  for; the answer's first code is the next best), cut to the column's 64 characters.
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
# huge answer must not make `useful` slow.
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
        word = " ".join(word.split())
        if word:
            seen.setdefault(word.casefold(), None)
    return list(seen)


@dataclass(frozen=True)
class Taxonomy:
    """The categories' keywords, compiled once: (code, pattern) in code order."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...]

    @classmethod
    def build(cls, categories: Iterable[tuple[str, str]]) -> Taxonomy:
        compiled = []
        for code, keywords in sorted(categories):
            words = parse_keywords(keywords)
            if not words:
                continue
            parts = []
            for word in sorted(words, key=len, reverse=True):
                escaped = re.escape(word)
                # ASCII words stand alone; CJK text has no spaces to stand between.
                if word.isascii():
                    escaped = rf"(?<![0-9a-z_]){escaped}(?![0-9a-z_])"
                parts.append(escaped)
            compiled.append((code, re.compile("|".join(parts), re.IGNORECASE)))
        return cls(patterns=tuple(compiled))

    def category(self, text: str, *, default: str) -> str:
        best: tuple[int, int, str] | None = None  # (-distinct hits, first position, code)
        for code, pattern in self.patterns:
            hits: set[str] = set()
            first = -1
            for match in pattern.finditer(text):
                if first < 0:
                    first = match.start()
                hits.add(match.group().casefold())
            if hits:
                candidate = (-len(hits), first, code)
                if best is None or candidate < best:
                    best = candidate
        return best[2] if best else default


def propose(*, query: str, answer: str, taxonomy: Taxonomy, default_category: str) -> Proposal:
    query = (query or "")[:QUESTION_CHARS]
    answer = (answer or "")[:ANSWER_CHARS]
    codes = find_error_codes(query) or find_error_codes(answer)
    code = codes[0][:ERROR_CODE_MAX_LENGTH] if codes else None
    category = taxonomy.category(f"{query}\n{answer}", default=default_category)
    return Proposal(fault_category=category, error_code=code)


def taxonomy_of(rows: Sequence[tuple[str, str]], *, exclude: str) -> Taxonomy:
    """The taxonomy without `exclude` (GENERAL is where no match lands, never a match)."""
    return Taxonomy.build((code, words) for code, words in rows if code != exclude)
