"""Importing cases from files: JSONL and CSV rows, and folders of Markdown runbooks.

Each file is imported whole or not at all (one transaction). Every row is checked, and
written, even after a bad one, so that every bad row is told (its file and line, the first
PROBLEMS_SHOWN of a file's) and a second run finds nothing new; a file with any bad row is
rolled back. A problem of the whole file (not UTF-8, not CSV, its columns) is told alone.
Importing the same source again updates its case and never adds a second one: a runbook
is known by its path from the working directory (its content hash says whether it
changed), a row by its `caseId` when it has one, else by its file's path and the row's
content hash. A row's `mergedInto` is recorded once every row of its file is written
(the case it names may come later): its case merged into that one, as an operator's merge
does, the file saying which is kept (caselibrary/services/import_merges.py); a row whose
merge cannot be recorded is imported as a case of its own (a case already merged elsewhere
stays so), told for its row.
`dry_run` does every check and every write, then rolls back.
What goes wrong is told in the active language: the admin's, or LANGUAGE_CODE for
`import_cases` (Django runs a command in it).
"""

import hashlib
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from caselibrary.case_files import (
    CaseFileError,
    CaseFileProblems,
    CaseRecord,
    case_record,
    decode,
    join_problems,
    read_csv,
    read_jsonl,
)
from caselibrary.error_codes import normalise_error_code
from caselibrary.models import (
    GENERAL_CATEGORY,
    CaseLibrary,
    FaultCategory,
    SourceType,
)
from caselibrary.runbooks import (
    Runbook,
    RunbookError,
    case_error_code,
    case_source_hash,
    case_texts,
    earlier_source_hashes,
    parse_runbook,
)
from caselibrary.services.cases import case_update
from caselibrary.services.import_merges import MergeClaim, case_merges_claimed
from caselibrary.services.import_sources import (
    Keyed,
    changes_from_file,
    source_found,
    source_remember,
)
from caselibrary.services.index import case_index_request, case_index_requests_deferred
from config import metrics

CASE_FILE_SUFFIXES = (".jsonl", ".csv", ".md")
IMPORT_USER = "import"


@dataclass
class FileOutcome:
    source: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    cases: list[tuple[str, str]] = field(default_factory=list)  # each row's result, case id
    merges: list[tuple[str, str]] = field(default_factory=list)  # merged case, kept case
    # What is wrong with the file, each with its line: nothing of it was imported.
    problems: list[str] = field(default_factory=list)
    # The rows whose merge was not recorded, each with its line and why.
    notes: list[str] = field(default_factory=list)

    @property
    def merged(self) -> int:
        return len(self.merges)


@dataclass
class ImportOutcome:
    dry_run: bool
    files: list[FileOutcome] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(f, name) for f in self.files)

    @property
    def failed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.problems]


@dataclass(frozen=True)
class CaseFile:
    path: Path
    source: str  # how it is named to people: its name, or its path within the folder
    key: str  # what it is known by between imports: its path from the working directory


def case_files_in(path: Path) -> list[CaseFile]:
    """The case files at `path` (a file, or a folder searched recursively). Each is known
    by its path relative to the working directory (absolute when outside it): a file
    imported alone and the same file imported with its folder are one source, and two
    runbooks named README.md in different folders are two."""
    if path.is_file():
        return [CaseFile(path, path.name, _key_of(path))]
    found = sorted(
        p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in CASE_FILE_SUFFIXES
    )
    return [CaseFile(p, p.relative_to(path).as_posix(), _key_of(p)) for p in found]


def _key_of(path: Path) -> str:
    resolved = path.resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def cases_import_path(
    *,
    path: Path,
    created_by: str = IMPORT_USER,
    dry_run: bool = False,
    on_file: Callable[[str], None] | None = None,
) -> ImportOutcome:
    """Import every case file at `path`; a bad file is reported and skipped. A dry run
    writes every file, each seeing the files before it as the import would (a session
    two files claim is refused in the second), then rolls them all back."""
    outcome = ImportOutcome(dry_run=dry_run)
    with transaction.atomic() if dry_run else nullcontext():
        for file in case_files_in(path):
            outcome.files.append(
                cases_import_file(
                    data=file.path.read_bytes(),
                    source=file.source,
                    key=file.key,
                    created_by=created_by,
                )
            )
            if on_file:
                on_file(file.source)
        if dry_run:
            transaction.set_rollback(True)
    return outcome


def cases_import_file(
    *,
    data: bytes,
    source: str,
    key: str | None = None,
    created_by: str = IMPORT_USER,
    dry_run: bool = False,
) -> FileOutcome:
    """Import one file (its kind by its name's suffix), whole or not at all. `source` names
    it in messages; `key` is what it is known by between imports (`source` when not
    given, as for an upload, which has a name and no path)."""
    outcome = FileOutcome(source=source)
    # A row's category is checked with the rest of it when it is read, so that a bad row
    # is told with everything wrong in it.
    categories = set(FaultCategory.objects.values_list("code", flat=True))
    try:
        keyed, problems = _read(data, source, categories)
    except CaseFileError as exc:
        return FileOutcome(source=source, problems=[str(exc)])
    if key is not None:
        # What an earlier release knew the file by (its name, or its path within the
        # folder imported) is read when the key finds nothing.
        legacy = source if key != source else None
        keyed = [replace(item, source_path=key, legacy_path=legacy, on_disk=True) for item in keyed]
    claims: list[MergeClaim] = []  # the rows naming a case to merge into
    notes = CaseFileProblems(source)
    with transaction.atomic():
        with case_index_requests_deferred():  # asked once for the file, below
            for item in keyed:
                try:
                    result, case_id = _upsert(item, created_by=created_by)
                except CaseFileError as exc:
                    problems.add(exc)
                    continue
                setattr(outcome, result, getattr(outcome, result) + 1)
                outcome.cases.append((result, case_id))
                if item.record.merged_into:
                    into = item.record.merged_into
                    claims.append(MergeClaim(item.name, item.record.line, case_id, into))
            if claims and not problems:
                outcome.merges = case_merges_claimed(
                    claims=claims, notes=notes, updated_by=created_by
                )
        if problems or dry_run:
            transaction.set_rollback(True)
        elif outcome.created or outcome.updated or outcome.merged:
            case_index_request()
    if problems:
        return FileOutcome(source=source, problems=problems.messages())
    outcome.notes = notes.messages()
    return outcome


def _read(data: bytes, source: str, categories: set[str]) -> tuple[list[Keyed], CaseFileProblems]:
    """The file's good records and its bad rows' problems (a category not in
    `categories` among them); CaseFileError when the file as a whole cannot be read."""
    suffix = Path(source).suffix.lower()
    text = decode(data, source)
    if suffix == ".jsonl":
        records, problems = read_jsonl(text, source, categories=categories)
    elif suffix == ".csv":
        records, problems = read_csv(text, source, categories=categories)
    elif suffix == ".md":
        return [_runbook(text, source, categories)], CaseFileProblems(source)
    else:
        raise CaseFileError(source, None, _("not a case file (.jsonl, .csv or .md)"))
    return [Keyed(r, source, _row_hash(r), by_path=False) for r in records], problems


def _row_hash(record: CaseRecord) -> str:
    """What a row is known by in its file: its content's hash, and a row naming its case
    that case's as well (two cases saying the same are two rows of an export)."""
    if record.case_id is None:
        return record.content_hash
    return hashlib.sha256(f"{record.case_id}\n{record.content_hash}".encode()).hexdigest()


def _runbook(text: str, source: str, categories: set[str]) -> Keyed:
    """A Markdown runbook as one case (caselibrary/runbooks.py reads it and says which text
    goes where: every section is kept), checked as a row is. The case has no field of its
    own for the symptoms: they open the root cause, where the alert names they quote are
    searched too."""
    try:
        runbook = parse_runbook(text, source=source)
    except RunbookError as exc:
        # runbooks.py has no Django: its message is the catalogue's English, told here.
        raise CaseFileError(source, exc.line, _(exc.message)) from None
    root_cause, solution = case_texts(runbook)
    missing = []
    if not root_cause.strip():
        missing.append(_("no symptoms or root-cause section (现象 / 根因 / root cause)"))
    if not solution.strip():
        missing.append(_("no solution section (处理步骤 / 解决方案 / solution)"))
    if missing:
        raise CaseFileError(source, None, join_problems(missing))
    case = {
        "title": runbook.title,
        "rootCause": root_cause,
        "solution": solution,
        "errorCode": _runbook_code(runbook),
    }
    record = case_record(case, source, 1, categories=categories)
    return Keyed(
        record,
        source,
        case_source_hash(runbook),
        by_path=True,
        earlier_hashes=earlier_source_hashes(runbook),
    )


def _runbook_code(runbook: Runbook) -> str | None:
    """The case's one code: the alert the runbook is about (its title's, else its
    description's), else its error code (caselibrary.runbooks.case_error_code)."""
    return case_error_code(runbook)


def _upsert(item: Keyed, *, created_by: str) -> tuple[str, str]:
    """Create, update or leave the record's case (its category in the taxonomy, checked
    when read); returns which it did, and the case's id."""
    record = item.record
    wanted = {
        "title": record.title,
        "root_cause": record.root_cause,
        "solution": record.solution,
        "fault_category": record.fault_category or GENERAL_CATEGORY,
        "error_code": normalise_error_code(record.error_code) if record.error_code else None,
        "diagnosis_id": record.session_id,
    }
    try:
        # A savepoint per row: a row the database refuses is undone alone, and the rows
        # after it are still written, so that each is checked as the import would write it.
        with transaction.atomic():
            case, source = source_found(item)
            if case is None:
                case = _create(record, wanted, created_by=created_by)
                result = "created"
            elif source is not None and source.content_hash == item.content_hash:
                # The file (or row) as it was last imported: the case is left as curators
                # made it since, so that a scheduled sync undoes none of their work.
                result = "unchanged"
            else:
                changes = {k: v for k, v in wanted.items() if _differs(getattr(case, k), v)}
                if record.session_id is None:
                    changes.pop("diagnosis_id", None)  # a row without one keeps the case's
                if record.fault_category is None:
                    changes.pop("fault_category", None)  # nor one without a category
                if source is not None and (item.by_path or record.case_id is not None):
                    # A runbook, or a row naming its case, read before: the fields it
                    # changed since, a curator's change of the others kept.
                    changes = changes_from_file(
                        changes, wanted=wanted, case=case, source=source, item=item
                    )
                if changes:
                    case_update(case=case, updated_by=created_by, **changes)
                result = "updated" if changes else "unchanged"
            source_remember(case, item, source, wanted=wanted)
    except ValidationError as exc:
        raise CaseFileError(item.name, record.line, join_problems(exc.messages)) from None
    except IntegrityError:
        raise CaseFileError(
            item.name, record.line, _("another case has this sessionId or source")
        ) from None
    return result, case.case_id


def _differs(stored: object, read: object) -> bool:
    """A file's texts are read trimmed (as the API reads them): a case whose title kept a
    space at its end (an automatic title is the question's first 100 characters) is
    unchanged by its own export read back."""
    if isinstance(stored, str) and isinstance(read, str):
        return stored.strip() != read.strip()
    return stored != read


def _create(record: CaseRecord, wanted: dict, *, created_by: str) -> CaseLibrary:
    case = CaseLibrary(
        source_type=record.source_type or SourceType.MANUAL,
        created_by=record.created_by or created_by,
        updated_by=created_by,
        **wanted,
    )
    if record.case_id:
        case.case_id = record.case_id
    # A case outlives its session (no foreign key in the database): an exported case
    # whose session was purged reads back with its sessionId. Its uniqueness is the
    # database's to check.
    case.full_clean(exclude=["diagnosis"], validate_unique=False)
    case.save(force_insert=True)
    case_index_request()
    transaction.on_commit(partial(metrics.case_created, case.source_type), robust=True)
    return case


def outcome_lines(outcome: ImportOutcome) -> Iterable[str]:
    """What an import did, for people: one line per problem of each failed file and per
    row of an imported one whose merge was not recorded (its file and line), then the
    totals (the merges among them when there are any)."""
    for file in outcome.files:
        for problem in file.problems:
            yield _("skipped %(error)s") % {"error": problem}
        yield from file.notes
    counts = {
        "files": len(outcome.files),
        "created": outcome.total("created"),
        "updated": outcome.total("updated"),
        "unchanged": outcome.total("unchanged"),
        "merged": outcome.total("merged"),
        "skipped": len(outcome.failed),
    }
    # Each count with its noun singular or plural, joined.
    yield _("%(files)s: %(cases)s, %(skipped)s") % {
        "files": ngettext("%(files)d file", "%(files)d files", counts["files"]) % counts,
        "cases": _cases_done(outcome.dry_run, counts) % counts,
        "skipped": ngettext(
            "%(skipped)d file skipped", "%(skipped)d files skipped", counts["skipped"]
        )
        % counts,
    }


def _cases_done(dry_run: bool, counts: dict[str, int]) -> str:
    created = counts["created"]
    if counts["merged"]:
        return (
            ngettext(
                "%(created)d case would be created, %(updated)d updated, %(unchanged)d "
                "unchanged, %(merged)d would be merged",
                "%(created)d cases would be created, %(updated)d updated, %(unchanged)d "
                "unchanged, %(merged)d would be merged",
                created,
            )
            if dry_run
            else ngettext(
                "%(created)d case was created, %(updated)d updated, %(unchanged)d "
                "unchanged, %(merged)d merged",
                "%(created)d cases were created, %(updated)d updated, %(unchanged)d "
                "unchanged, %(merged)d merged",
                created,
            )
        )
    return (
        ngettext(
            "%(created)d case would be created, %(updated)d updated, %(unchanged)d unchanged",
            "%(created)d cases would be created, %(updated)d updated, %(unchanged)d unchanged",
            created,
        )
        if dry_run
        else ngettext(
            "%(created)d case was created, %(updated)d updated, %(unchanged)d unchanged",
            "%(created)d cases were created, %(updated)d updated, %(unchanged)d unchanged",
            created,
        )
    )
