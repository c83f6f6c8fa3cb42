"""The merges a case file's rows claim (`mergedInto`), recorded once all its rows are
written (caselibrary/services/imports.py): each row's case merged into the case it names,
as an operator's merge does, the file saying which is kept."""

from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from caselibrary.case_files import CaseFileError, CaseFileProblems, join_problems
from caselibrary.models import CaseLibrary, CaseMerge
from caselibrary.services.duplicates import case_merge_into


class MergeClaim(NamedTuple):
    """A row naming a case to merge its case into."""

    source: str  # the row's file, as messages name it
    line: int | None  # the row's line
    case_id: str  # the row's case
    into: str  # the case it names


def case_merges_claimed(
    *, claims: list[MergeClaim], notes: CaseFileProblems, updated_by: str
) -> list[tuple[str, str]]:
    """Merge each claim's case into the case it names; the merges recorded, each as
    (merged case, kept case). A claim whose merge is not recorded is told in `notes`: a
    case already merged into another case than its row names keeps that merge; one naming
    itself, or a case that does not exist, or a case merged itself (in the library, or by
    a row of the file, whatever their order), is a case of its own."""
    claimed = {c.case_id: c.into for c in claims if c.into != c.case_id}
    named = set(claimed.values())
    present = set(CaseLibrary.objects.filter(case_id__in=named).values_list("case_id", flat=True))
    merges = CaseMerge.objects.filter(case_id__in=named | set(claimed))
    merged_into = dict(merges.values_list("case_id", "merged_into"))
    stays = _("the row's case stays a case of its own")
    recorded: list[tuple[str, str]] = []
    for claim in claims:
        case_id, into = claim.case_id, claim.into
        kept, further = merged_into.get(case_id), merged_into.get(into) or claimed.get(into)
        if kept == into:
            continue  # merged so already: the same file imported again
        if kept is not None:
            told = _(
                'the case is already merged into "%(kept)s", not "%(case)s"; that merge is kept'
            )
            told %= {"kept": kept, "case": into}
        elif into == case_id:
            told = join_problems([_("names the row's own case"), stays])
        elif into not in present:
            told = join_problems([_('no case "%(case)s" after the import') % {"case": into}, stays])
        elif further is not None:
            itself = _('case "%(case)s" is itself merged into "%(into)s"')
            told = join_problems([itself % {"case": into, "into": further}, stays])
        else:
            try:
                case_merge_into(case_id=case_id, kept_id=into, updated_by=updated_by)
            except ValidationError as exc:  # merged meanwhile, by another hand
                told = join_problems([*exc.messages, stays])
            else:
                recorded.append((case_id, into))
                # As the merge did: the cases merged into this one are now merged into `into`.
                merged_into = {c: into if k == case_id else k for c, k in merged_into.items()}
                merged_into[case_id] = into
                continue
        notes.add(CaseFileError(claim.source, claim.line, f"mergedInto: {told}"))
    return recorded
