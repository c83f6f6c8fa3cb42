"""Reads of the case library."""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Min, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Trim, Upper
from django.db.models.lookups import Exact
from django.utils import timezone

from caselibrary.answer_sections import split_answer
from caselibrary.models import (
    GENERAL_CATEGORY,
    SYSTEM_USER,
    CaseChange,
    CaseIndexState,
    CaseLibrary,
    CaseMerge,
    CasePassage,
    CaseSearch,
    FaultCategory,
    SourceType,
    title_from_query,
)
from caselibrary.search_engine import L0, L1, NONE, Hit, Ranked, decision_thresholds, rank_cases
from caselibrary.structuring import Taxonomy, taxonomy_of
from config.api import NotFound
from config.optional_cache import cached_or_computed
from diagnosis.models import DiagnosisSession


class CaseNotFound(NotFound):
    def __init__(self, case_id: str) -> None:
        super().__init__(f'案例 "{case_id}" 不存在')


def case_merged_into() -> Subquery:
    """To annotate cases with: the id of the case each was merged into (in the admin, or
    by an import), None for a case not merged. One read by the case_merge primary key."""
    merge = CaseMerge.objects.filter(case_id=OuterRef("case_id")).values("merged_into")
    return Subquery(merge[:1])


def _cases_with_merge() -> QuerySet[CaseLibrary]:
    """The cases, each with `merged_into` (case_merged_into)."""
    return CaseLibrary.objects.annotate(merged_into=case_merged_into())


def case_list() -> QuerySet[CaseLibrary]:
    """The library as clients list it: a merged case is left out (found through the
    case it was merged into, and still read by its id)."""
    return _cases_with_merge().filter(merged_into__isnull=True)


def case_get(*, case_id: str) -> CaseLibrary:
    """One case by its id, merged or not (`merged_into` says which)."""
    try:
        return _cases_with_merge().get(case_id=case_id)
    except CaseLibrary.DoesNotExist:
        raise CaseNotFound(case_id) from None


def case_id_for_session(*, session_id: str) -> str | None:
    """The case made from a session, if there is one (the unique key allows one)."""
    return (
        CaseLibrary.objects.filter(diagnosis_id=session_id)
        .values_list("case_id", flat=True)
        .first()
    )


def case_draft_from_session(*, session_id: str) -> dict[str, str] | None:
    """What a MANUAL case made from a session starts with; None if there is no session.

    The AUTO case's title; the answer's root-cause and solution sections as those fields
    when it has them (caselibrary/answer_sections.py), else the whole answer in both, as
    an AUTO case has it. Either way the operator only edits what differs.
    """
    session = (
        DiagnosisSession.objects.filter(session_id=session_id)
        .only("session_id", "query", "answer")
        .first()
    )
    if session is None:
        return None
    answer = session.answer or ""
    sections = split_answer(answer)
    return {
        "diagnosis": session.session_id,
        "title": title_from_query(session.query, session.session_id),
        "root_cause": sections.root_cause if sections else answer,
        "solution": sections.solution if sections else answer,
    }


def fault_category_choices() -> list[tuple[str, str]]:
    """The taxonomy as (code, "CODE · name") pairs, in code order."""
    return [(c.code, str(c)) for c in FaultCategory.objects.all()]


def fault_category_in_use(*, code: str) -> bool:
    """GENERAL always is: every automatic case starts there."""
    return code == GENERAL_CATEGORY or CaseLibrary.objects.filter(fault_category=code).exists()


def fault_category_case_count(*, code: str) -> int:
    """How many cases are in the category."""
    return CaseLibrary.objects.filter(fault_category=code).count()


# --- Search ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseMatch:
    case: CaseLibrary
    score: float
    match_level: str
    # Why it was found (explain=true): ranks, closeness and the passage that matched.
    explain: dict[str, Any] | None = None


@dataclass(frozen=True)
class CasesFound:
    match_level: str
    matches: list[CaseMatch]
    # The embedding model or the search backend failed: ranked by what was left.
    degraded: bool = False
    degraded_by: str = ""
    embed_ms: float = 0.0
    # Why the answer is what it is (explain=true): the decision's bars and how the
    # nearest similar case fared against them, and the names no case mentions.
    explain: dict[str, Any] | None = None

    @property
    def case_ids(self) -> list[str]:
        return [m.case.case_id for m in self.matches]


def cases_find(
    *, query: str, error_code: str | None = None, limit: int, explain: bool = False
) -> CasesFound:
    """The cases that answer `query`: exact (L0) hits first, then similar (L1) ones
    (caselibrary/search_engine.py). A case deleted or merged since it was indexed is not
    found."""
    ranked = rank_cases(query=query, error_code=error_code, limit=limit)
    nearest = next((hit for hit in ranked.candidates if hit.match_level == L1), None)
    wanted = [hit.case_id for hit in ranked.hits]
    if explain and nearest is not None:
        wanted.append(nearest.case_id)
    # A case merged since the indexer's last pass is not found as itself either.
    merged = CaseMerge.objects.values("case_id")
    rows = CaseLibrary.objects.exclude(case_id__in=merged).in_bulk(wanted)
    matches = [
        CaseMatch(
            rows[hit.case_id],
            _score(hit, degraded=ranked.degraded),
            hit.match_level,
            _explain(hit) if explain else None,
        )
        for hit in ranked.hits
        if hit.case_id in rows
    ]
    levels = {m.match_level for m in matches}
    level = L0 if L0 in levels else L1 if L1 in levels else NONE
    return CasesFound(
        level,
        matches,
        degraded=ranked.degraded,
        degraded_by=ranked.degraded_by,
        embed_ms=ranked.embed_ms,
        explain=_decision(ranked, nearest, rows) if explain else None,
    )


def _decision(ranked: Ranked, nearest: Hit | None, rows: dict[str, CaseLibrary]) -> dict[str, Any]:
    """The answer-or-NONE decision as it went: the bars a similar case must clear (one
    of them), the best similar case with its figures and whether it was offered, and
    the question's names no case mentions (which refuse every similar case)."""
    min_peak, min_coverage = decision_thresholds()
    case = rows.get(nearest.case_id) if nearest is not None else None
    offered = {hit.case_id for hit in ranked.hits}
    return {
        "minPeak": min_peak,
        "minTermCoverage": min_coverage,
        "unknownNames": ranked.unknown_names,
        "terms": ranked.terms,
        "nearestSimilar": None
        if nearest is None or case is None
        else {
            "caseId": case.case_id,
            "title": case.title,
            "offered": case.case_id in offered,
            "peak": nearest.peak,
            "termCoverage": nearest.coverage,
            "cosine": nearest.cosine,
        },
    }


def _score(hit: Hit, *, degraded: bool) -> float:
    """1 for an exact hit; else the cosine of the case's best passage. A similar case the
    dense ranking did not reach (found by its words alone) is below every passage that
    ranking kept: 0. In a degraded search there is no cosine: the share of the query's
    terms the case holds."""
    if hit.match_level == L0:
        return 1.0
    if degraded:
        return hit.coverage or 0.0
    return hit.cosine if hit.cosine is not None else 0.0


def _explain(hit: Hit) -> dict[str, Any]:
    return {
        "lexicalRank": hit.lexical_rank,
        "denseRank": hit.dense_rank,
        "fusedScore": hit.score,
        "cosine": hit.cosine,
        "termCoverage": hit.coverage,
        "passage": {"kind": hit.passage_kind, "text": hit.passage_text} if hit.passage_id else None,
    }


def session_case_searches(*, session_id: str) -> QuerySet[CaseSearch]:
    return CaseSearch.objects.filter(session_id=session_id).order_by("id")


def case_index_state() -> CaseIndexState:
    return CaseIndexState.objects.get_or_create(id=1)[0]


@dataclass(frozen=True)
class CaseIndexStatus:
    loaded_version: str | None
    loaded_cases: int
    built_at: Any
    build_seconds: float
    requested_at: Any
    building_since: Any
    findability: dict | None


def case_index_status(*, waiting: bool = False) -> CaseIndexStatus:
    """What the index holds (one read of the coordination row): the embedding model of the
    vectors (`loaded_version`), the cases indexed, the indexer's lease (`building_since`);
    with `waiting`, also the time of the oldest change not indexed yet (`requested_at`)."""
    state = case_index_state()
    oldest = None
    if waiting:
        oldest = CaseChange.objects.order_by("seq").values_list("changed_at", flat=True).first()
    return CaseIndexStatus(
        loaded_version=(state.version or None) if state.cases else None,
        loaded_cases=state.cases,
        built_at=state.built_at,
        build_seconds=state.build_seconds,
        requested_at=oldest,
        building_since=state.building_since,
        findability=state.findability,
    )


FINDABILITY_TOP = 3


def case_findability(*, sample: int | None = None) -> dict[str, Any] | None:
    """Search each case's title and error code; the shares found at L0 and in the top 3.
    With `sample`, that many cases spread evenly over the library (by case id). None when
    nothing is indexed yet. Stops at a search that answers degraded (`degraded_by`)."""
    if not CasePassage.objects.exists():
        return None
    # A merged case is found through the case it was merged into, never as itself.
    cases = CaseLibrary.objects.exclude(case_id__in=CaseMerge.objects.values("case_id"))
    step = max(1, cases.count() // sample) if sample else 1
    every = cases.order_by("case_id").values_list("case_id", "title", "error_code")
    picked = list(every.iterator())[::step][: sample or None]
    counts = {"title_l0": 0, "title_top3": 0, "code_l0": 0, "code_top3": 0, "with_code": 0}
    degraded_by = next(filter(None, (_found_again(counts, *row) for row in picked)), "")
    checked, with_code = len(picked), counts["with_code"]
    return {
        "version": case_index_state().version,
        "cases": checked,
        "degraded_by": degraded_by,
        "with_code": with_code,
        "title_l0": counts["title_l0"] / checked if checked else 0.0,
        "title_top3": counts["title_top3"] / checked if checked else 0.0,
        "code_l0": counts["code_l0"] / with_code if with_code else 0.0,
        "code_top3": counts["code_top3"] / with_code if with_code else 0.0,
        "checked_at": timezone.now().isoformat(),
    }


def _found_again(counts: dict[str, int], case_id: str, title: str, code: str | None) -> str:
    """Count the searches by title and code that find the case; what degraded one, if any."""
    counts["with_code"] += bool(code)
    for by, query in (("title", title), ("code", code)):
        found = cases_find(query=query, limit=FINDABILITY_TOP) if query else None
        own = [m for m in found.matches if m.case.case_id == case_id] if found else []
        counts[f"{by}_l0"] += any(m.match_level == L0 for m in own)
        counts[f"{by}_top3"] += bool(own)
        if found and found.degraded:
            return found.degraded_by or "a search answered degraded"
    return ""


# --- Curation -------------------------------------------------------------------------

# No operator has changed the case since the system made it: its last change is the
# system's (the case made from `useful`, the category and error code the structuring
# filled in). A change saved on the case page or in the list, the bulk category action,
# a merge or an import records the operator (or who imported) instead, and so does
# saving such a case unchanged on its page (the operator confirms the proposal). The
# structuring's accuracy counts a proposal as reviewed once this no longer holds.
UNREVIEWED = Q(updated_by=SYSTEM_USER)

# What curators still have to look at: a case in GENERAL, whoever saved it last, and an
# AUTO case whose category and error code are still the system's.
AWAITING_CURATION = Q(fault_category=GENERAL_CATEGORY) | (
    Q(source_type=SourceType.AUTO) & UNREVIEWED
)


def cases_awaiting_curation(
    queryset: QuerySet[CaseLibrary] | None = None,
) -> QuerySet[CaseLibrary]:
    """The cases (of `queryset`, else of the library) awaiting curation."""
    return (CaseLibrary.objects.all() if queryset is None else queryset).filter(AWAITING_CURATION)


def cases_curated(queryset: QuerySet[CaseLibrary] | None = None) -> QuerySet[CaseLibrary]:
    """The cases (of `queryset`, else of the library) not awaiting curation."""
    return (CaseLibrary.objects.all() if queryset is None else queryset).exclude(AWAITING_CURATION)


# --- Structuring ----------------------------------------------------------------------


def fault_category_taxonomy() -> Taxonomy:
    """The categories' keywords, compiled, GENERAL left out (it is where no match lands).

    Read afresh by each structuring pass (one small query a pass), so a keyword edited in
    the admin applies to the next new case in every process.
    """
    rows = list(FaultCategory.objects.values_list("code", "keywords"))
    return taxonomy_of(rows, exclude=GENERAL_CATEGORY)


@dataclass(frozen=True)
class StructuringAccuracy:
    """How often operators kept what the automatic structuring proposed.

    Over AUTO cases with a recorded proposal that an operator has saved since (no
    longer UNREVIEWED: `updated_by` is not `system`): `category_kept` of them still have
    the proposed category, `code_kept` the proposed error code (both empty counts as
    kept; compared trimmed and case-insensitively).
    """

    proposed: int
    reviewed: int
    category_kept: int
    code_kept: int

    @property
    def category_rate(self) -> float | None:
        return self.category_kept / self.reviewed if self.reviewed else None

    @property
    def code_rate(self) -> float | None:
        return self.code_kept / self.reviewed if self.reviewed else None


ACCURACY_CACHE_SECONDS = 60


def case_structuring_accuracy() -> StructuringAccuracy:
    """One aggregate over the proposals and their cases, cached for a minute (the
    overview page is opened often; the numbers move slowly)."""
    return cached_or_computed("case-structuring-accuracy", _accuracy, ACCURACY_CACHE_SECONDS)


def _accuracy() -> StructuringAccuracy:
    reviewed = ~UNREVIEWED
    category_kept = Q(fault_category=F("structuring__proposed_category"))
    code_kept = Q(Exact(_code("error_code"), _code("structuring__proposed_error_code")))
    counts = CaseLibrary.objects.filter(
        source_type=SourceType.AUTO, structuring__isnull=False
    ).aggregate(
        proposed=Count("pk"),
        reviewed=Count("pk", filter=reviewed),
        category_kept=Count("pk", filter=reviewed & category_kept),
        code_kept=Count("pk", filter=reviewed & code_kept),
    )
    return StructuringAccuracy(**{name: int(n or 0) for name, n in counts.items()})


def _code(field: str) -> Upper:
    """An error code as the accuracy compares it: trimmed, upper-cased, empty for none."""
    return Upper(Trim(Coalesce(field, Value(""))))


def cases_as_jsonl(*, batch: int = 1000) -> Iterator[str]:
    """Every case as a line of JSON with the API's fields, oldest first, read in batches
    (what `export_cases` writes and `import_cases` reads back). A merged case is written
    too, with the case it was merged into: an import records the merge again."""
    last = None
    while True:
        page = _cases_with_merge().order_by("created_at", "case_id")
        if last is not None:
            page = page.filter(
                Q(created_at__gt=last.created_at)
                | Q(created_at=last.created_at, case_id__gt=last.case_id)
            )
        rows = list(page[:batch])
        if not rows:
            return
        for case in rows:
            yield json.dumps(_case_row(case), ensure_ascii=False) + "\n"
        last = rows[-1]


def _case_row(case: CaseLibrary) -> dict[str, Any]:
    # The keys and order of the API's case (caselibrary/serializers.py CaseOutput).
    return {
        "caseId": case.case_id,
        "sessionId": case.diagnosis_id,
        "sourceType": case.source_type,
        "faultCategory": case.fault_category,
        "errorCode": case.error_code,
        "title": case.title,
        "rootCause": case.root_cause,
        "solution": case.solution,
        "createdBy": case.created_by,
        "updatedBy": case.updated_by,
        "createdAt": case.created_at.isoformat(),
        "updatedAt": case.updated_at.isoformat(),
        "mergedInto": case.merged_into,
    }


def cases_waiting(*, since: datetime, limit: int = 10) -> list[tuple[str, datetime]]:
    """The cases marked before `since` and still waiting (at most `limit`, oldest first):
    cases the indexer could not index (logged at ERROR), or a library with no worker."""
    waiting = CaseChange.objects.filter(changed_at__lt=since).values("case_id")
    first = waiting.annotate(first=Min("changed_at")).order_by("first", "case_id")
    return list(first.values_list("case_id", "first")[:limit])
