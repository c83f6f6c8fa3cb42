"""The case library's search index: BM25 (bm25s) over title, root cause and solution, and
exact tables for error codes and titles, kept as files and read through memory maps.

An index is a directory of numpy arrays and bm25s's own files, named by its version; the
file `CURRENT` names the one in use and is replaced atomically, so a search running while a
new index is written keeps answering from the old one. Each process checks `CURRENT` at
most once a second and maps the new version when it changes; a process that finds no index
answers exact error codes from the database instead (caselibrary/selectors.py).

No Django here: the builder is fed rows, the reader is handed a directory.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import threading
import time
import uuid
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np

from caselibrary.error_codes import error_code_key, find_error_codes, normalise_error_code
from caselibrary.search_text import CODE_PREFIX, key_hash, normalise_text, tokenize

logger = logging.getLogger(__name__)

CURRENT = "CURRENT"
FORMAT = 2
# Lucene's BM25 variant: a term's contribution is idf * tf / (tf + k1 * length norm), so it
# never exceeds its idf, which makes "share of the query's weight matched" a bounded score.
K1, B = 1.2, 0.75
# The title says what the case is about: it counts twice against the body.
TITLE_WEIGHT = 2
# A query term the library has never seen weighs this share of the rarest term's weight:
# enough that a query mostly about something else finds nothing, not so much that a service
# name nobody wrote down hides the case.
UNSEEN_TERM_WEIGHT = 0.3
RELOAD_CHECK_SECONDS = 1.0
# Cases per bm25s index: bounds the memory a build needs (one shard's matrices at a time).
SHARD_SIZE = 50_000

L0 = "L0"
L1 = "L1"
NONE = "NONE"


@dataclass(frozen=True)
class CaseText:
    case_id: str
    title: str
    root_cause: str
    solution: str
    error_code: str | None


@dataclass(frozen=True)
class Found:
    case_id: str
    score: float
    match_level: str


@dataclass(frozen=True)
class BuildResult:
    version: str
    cases: int
    terms: int
    seconds: float


def case_terms(case: CaseText) -> list[str]:
    """The terms a case is indexed under.

    An automatic case holds the whole answer as both its root cause and its solution: that
    text is one text, counted once, or every answer term would weigh double against the
    cases an operator wrote.
    """
    same = case.solution.strip() == case.root_cause.strip()
    body = case.root_cause if same else f"{case.root_cause}\n{case.solution}"
    terms = tokenize(case.title) * TITLE_WEIGHT + tokenize(body)
    if case.error_code:
        terms.append(CODE_PREFIX + error_code_key(case.error_code))
    return terms


def build(
    cases: Iterable[CaseText], directory: Path, *, shard_size: int = SHARD_SIZE
) -> BuildResult:
    """Index `cases` (in a stable order: ties rank in that order) into a new version under
    `directory` and make it current. Old versions but the previous one are removed.

    The cases are indexed in shards of `shard_size`, each a bm25s index of its own, built
    and written before the next is read: building a million cases never holds more than
    one shard's matrices in memory. Cases reach the shards in case-id order (random), so
    each shard's term statistics are a large random sample of the library's, and a case's
    relevance (the share of the query's weight it matches, in its shard's statistics) is
    comparable across shards.
    """
    started = time.monotonic()
    directory.mkdir(parents=True, exist_ok=True)
    version = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"
    work = directory / f".building-{version}"
    work.mkdir()
    case_ids = bytearray()
    code_keys, code_docs = array("q"), array("i")
    title_keys, title_docs = array("q"), array("i")
    shards: list[int] = []
    terms = 0
    try:
        vocab: dict[str, int] = {}
        docs: list[np.ndarray] = []
        doc = -1
        for doc, case in enumerate(cases):
            case_ids += case.case_id.encode()[:36].ljust(36, b"\0")
            words = case_terms(case)
            docs.append(
                np.fromiter((vocab.setdefault(t, len(vocab)) for t in words), np.int32, len(words))
            )
            if case.error_code:
                code_keys.append(key_hash(error_code_key(case.error_code)))
                code_docs.append(doc)
            title = normalise_text(case.title)
            if title:
                title_keys.append(key_hash(title))
                title_docs.append(doc)
            if len(docs) == shard_size:
                terms += _write_shard(work, len(shards), docs, vocab)
                shards.append(len(docs))
                vocab, docs = {}, []
        if docs:
            terms += _write_shard(work, len(shards), docs, vocab)
            shards.append(len(docs))
        del vocab, docs
        count = doc + 1
        np.save(work / "case_ids.npy", np.frombuffer(bytes(case_ids), dtype="S36"))
        np.save(work / "codes.npy", _lookup_table(code_keys, code_docs))
        np.save(work / "titles.npy", _lookup_table(title_keys, title_docs))
        (work / "meta.json").write_text(
            json.dumps({"format": FORMAT, "version": version, "cases": count, "shards": shards})
        )
        work.rename(directory / version)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    _make_current(directory, version)
    return BuildResult(
        version=version, cases=count, terms=terms, seconds=time.monotonic() - started
    )


def _write_shard(work: Path, number: int, docs: list[np.ndarray], vocab: dict[str, int]) -> int:
    retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
    retriever.index((docs, vocab), create_empty_token=False, show_progress=False)
    path = work / f"shard-{number:04d}"
    retriever.save(str(path))
    # The vocabulary as a sorted table of term hashes: a process maps terms to ids by
    # binary search instead of holding bm25s's vocabulary dict per shard (at a million
    # cases, twenty dicts of 100,000 strings were most of a serving process's memory).
    table = np.empty(len(vocab), dtype=[("key", "<i8"), ("doc", "<i4")])
    table["key"] = np.fromiter((key_hash(t) for t in vocab), np.int64, len(vocab))
    table["doc"] = np.fromiter(vocab.values(), np.int32, len(vocab))
    np.save(path / "terms.npy", np.sort(table, order=["key", "doc"]))
    return len(vocab)


def _lookup_table(keys: array, docs: array) -> np.ndarray:
    table = np.empty(len(keys), dtype=[("key", "<i8"), ("doc", "<i4")])
    table["key"] = np.frombuffer(keys, dtype="<i8") if keys else []
    table["doc"] = np.frombuffer(docs, dtype="<i4") if docs else []
    return np.sort(table, order=["key", "doc"])


def _make_current(directory: Path, version: str) -> None:
    pointer = directory / f".{CURRENT}.{version}"
    pointer.write_text(version)
    previous = current_version(directory)
    os.replace(pointer, directory / CURRENT)
    # Processes that still map an older version keep their mapping (unlinked files live on
    # until unmapped); the previous one stays for those about to open it.
    keep = {version, previous}
    for entry in directory.iterdir():
        if entry.is_dir() and entry.name not in keep and not entry.name.startswith(".building"):
            shutil.rmtree(entry, ignore_errors=True)


def current_version(directory: Path) -> str | None:
    try:
        return (directory / CURRENT).read_text().strip() or None
    except FileNotFoundError:
        return None


class _Shard:
    """One bm25s index over a run of consecutive documents, with its term weights."""

    def __init__(self, path: Path, offset: int, size: int) -> None:
        self.offset, self.size = offset, size
        self.retriever = bm25s.BM25.load(str(path), mmap=True, load_vocab=False)
        self.terms = _Lookup(np.load(path / "terms.npy"))
        df = np.diff(np.asarray(self.retriever.scores["indptr"])).astype(np.float64)
        n = float(size)
        # Lucene's idf, per term, as bm25s scored it.
        self.idf = np.log1p((n - df + 0.5) / (df + 0.5))
        self.unseen_weight = math.log1p((n + 0.5) / 0.5) * UNSEEN_TERM_WEIGHT

    def term_ids(self, hashes: np.ndarray) -> list[int]:
        """The ids of the terms (by hash) this shard has seen."""
        keys = self.terms.keys
        if not len(keys) or not len(hashes):
            return []
        at = np.minimum(np.searchsorted(keys, hashes), len(keys) - 1)
        return self.terms.docs[at[keys[at] == hashes]].tolist()

    def relevance(self, hashes: np.ndarray) -> np.ndarray:
        ids = self.term_ids(hashes)
        weight = float(self.idf[ids].sum()) + self.unseen_weight * (len(hashes) - len(ids))
        if not ids or weight <= 0:
            return np.zeros(self.size, dtype=np.float32)
        return self.retriever.get_scores_from_ids(ids) / weight


def term_hashes(terms: list[str]) -> np.ndarray:
    """The distinct terms of a query, as the hashes shards look their ids up by."""
    return np.fromiter((key_hash(t) for t in dict.fromkeys(terms)), np.int64)


class CaseIndex:
    """One loaded version: read-only, shared by the threads of a process."""

    def __init__(self, path: Path) -> None:
        meta = json.loads((path / "meta.json").read_text())
        self.version: str = meta["version"]
        self.cases: int = meta["cases"]
        self.case_ids = np.load(path / "case_ids.npy", mmap_mode="r")
        # Keys and documents as separate contiguous arrays: a binary search over a
        # strided field of the structured array costs ten times as much.
        self.codes = _Lookup(np.load(path / "codes.npy"))
        self.titles = _Lookup(np.load(path / "titles.npy"))
        self.shards: list[_Shard] = []
        offset = 0
        for number, size in enumerate(meta.get("shards", [])):
            self.shards.append(_Shard(path / f"shard-{number:04d}", offset, size))
            offset += size

    def search(
        self, *, terms: list[str], code_keys: list[str], title: str, limit: int, threshold: float
    ) -> list[Found]:
        """Exact hits (error code, title) first, then similar ones above `threshold`.

        A similar hit's score is the share of the query's term weight the case matches
        (0..1); an exact hit scores 1.
        """
        exact: list[int] = []
        for key in code_keys:
            exact.extend(self.codes.find(key_hash(key)))
        if title:
            exact.extend(self.titles.find(key_hash(title)))
        relevance = self._relevance(terms)
        exact = list(dict.fromkeys(exact))
        if relevance is not None:
            exact.sort(key=lambda doc: (-relevance[doc], doc))
        found = [Found(self._case_id(doc), 1.0, L0) for doc in exact[:limit]]
        if relevance is None or len(found) >= limit:
            return found
        taken = set(exact)
        want = limit + len(taken)
        # Above the threshold first: most cases share no term with the query, and one
        # comparison over the array is cheaper than a partition of all of it.
        candidates = np.flatnonzero(relevance >= threshold)
        if len(candidates) > want:
            candidates = candidates[np.argpartition(-relevance[candidates], want - 1)[:want]]
        ranked = sorted(
            (int(doc) for doc in candidates), key=lambda doc: (-float(relevance[doc]), doc)
        )
        for doc in ranked:
            if len(found) >= limit:
                break
            if doc not in taken:
                found.append(Found(self._case_id(doc), round(float(relevance[doc]), 4), L1))
        return found

    def find(
        self, *, query: str, error_code: str | None = None, limit: int, threshold: float
    ) -> list[Found]:
        """`search` for a question as asked: its error codes, terms and title read from it."""
        return self.search(
            terms=tokenize(query),
            code_keys=[error_code_key(code) for code in query_codes(query, error_code)],
            title=normalise_text(query),
            limit=limit,
            threshold=threshold,
        )

    def _relevance(self, terms: list[str]) -> np.ndarray | None:
        if not self.shards or not terms:
            return None
        hashes = term_hashes(terms)
        parts = [shard.relevance(hashes) for shard in self.shards]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _case_id(self, doc: int) -> str:
        return self.case_ids[doc].decode()


def query_codes(query: str, error_code: str | None = None) -> list[str]:
    """The error codes a search looks for: the one given, then those in the query."""
    codes = find_error_codes(query)
    if error_code:
        codes = [normalise_error_code(error_code), *codes]
    return list(dict.fromkeys(codes))


class _Lookup:
    """A sorted (key, doc) table: the documents under one key, by binary search."""

    def __init__(self, table: np.ndarray) -> None:
        self.keys = np.ascontiguousarray(table["key"])
        self.docs = np.ascontiguousarray(table["doc"])

    def find(self, key: int) -> list[int]:
        start = int(np.searchsorted(self.keys, key, side="left"))
        end = int(np.searchsorted(self.keys, key, side="right"))
        return self.docs[start:end].tolist()


class IndexHolder:
    """The process's view of the current index, re-checked at most once a second."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._directory: Path | None = None
        self._index: CaseIndex | None = None
        self._checked = 0.0

    def get(self, directory: Path) -> CaseIndex | None:
        now = time.monotonic()
        if directory == self._directory and now - self._checked < RELOAD_CHECK_SECONDS:
            return self._index
        with self._lock:
            if directory != self._directory:
                self._directory, self._index = directory, None
            self._checked = now
            version = current_version(directory)
            if version is None:
                self._index = None
            elif self._index is None or self._index.version != version:
                try:
                    self._index = CaseIndex(directory / version)
                except (OSError, ValueError, KeyError) as exc:
                    # A version removed under us, or one half-copied by hand: keep what
                    # was loaded (or none) and look again at the next check.
                    logger.warning("case index %s not loaded: %s", version, exc)
            return self._index

    def forget(self) -> None:
        with self._lock:
            self._directory, self._index, self._checked = None, None, 0.0


holder = IndexHolder()
