"""Reading case files: JSONL and CSV with the API's case fields, each row checked by the
check of `POST /api/cases` itself (caselibrary/case_input.py), each problem named with its
file and line. The import service writes what these return (caselibrary/services/imports.py);
Markdown runbooks are read by caselibrary/runbooks.py and checked here as a row is
(`case_record`).

A row has `title`, `rootCause` and `solution`, and may have `caseId` (then it updates that
case: what `export_cases` writes), `sessionId`, `sourceType`, `faultCategory`,
`errorCode` and `mergedInto` (the case its case is merged into: the import records the
merge). `createdBy`, `updatedBy`, `createdAt` and `updatedAt` are accepted and ignored
but `createdBy`, so an export reads back; any other key is an error. An empty value
(null, "", an empty cell) is no value.

Every problem is told in the active language (the admin's, or LANGUAGE_CODE for
`import_cases`), after its file and line. A bad row does not stop the reading: every row is
checked, and every bad one told (the first PROBLEMS_SHOWN of them) with all that is wrong
in it, in the order of its columns: formula-like cells, each field's rule, its category
when not in the taxonomy given (`categories`). So a file is fixed in one go. A problem of
the whole file (not UTF-8, not CSV, columns missing or unknown, not one line of JSON) is
told alone: its rows cannot be read. A CSV header's names may have spaces around them
(spreadsheets add them); a header naming a column twice is refused, its rows having two
values for one field. Columns without a name at the end of the header (spreadsheets write
them) are ignored while their cells are empty; a row with a value under one is refused. A
parser's reason (json's, csv's) is told in words of ours (caselibrary/case_file_reasons.py),
at its column when it knows it.
"""

import bisect
import csv
import hashlib
import io
import json
import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from caselibrary.case_file_reasons import csv_reason, json_reason
from caselibrary.case_input import CaseFileRow
from caselibrary.models import GENERAL_CATEGORY

# Written to a file (or by the API) but not read back: the database keeps its own.
IGNORED_FIELDS = frozenset({"updatedBy", "createdAt", "updatedAt"})
FIELDS = tuple(CaseFileRow().fields)
REQUIRED_FIELDS = tuple(name for name, field in CaseFileRow().fields.items() if field.required)
# The problems of one file told, at most: a file wrong on every row is told by its first
# ones and a count of the others, not by thousands of lines.
PROBLEMS_SHOWN = 50
# A CSV cell may be as long as a case's longest field (200,000 characters), longer than the
# csv module's default limit (131,072); a longer one is told by its field's rule. The limit
# is the process's (csv has no other): set here once, never lowered.
CSV_CELL_LIMIT = 1_000_000
csv.field_size_limit(max(csv.field_size_limit(), CSV_CELL_LIMIT))
# A spreadsheet runs a cell starting with = + @ (or - followed by a formula) when the file
# is opened: refused, unless the cell starts with ' (kept as text, the ' dropped).
# Narrower than feedback/exports.py FORMULA_TRIGGERS on purpose: an import must not refuse
# ordinary text that starts with a minus ("-5 pods down", a "- step" list), while an
# export quotes every cell any spreadsheet might read as a formula.
_FORMULA = re.compile(r"\A(?:[=+@\t\r]|-[^\s-].*[(=!])", re.S)
# The full stop a problem ends with, dropped when another problem follows it (not an
# ellipsis's last dot).
_FULL_STOP = re.compile(r"(?<!\.)[.。]\Z")


class CaseFileError(Exception):
    """A problem in a file, where it is: nothing of that file is imported."""

    def __init__(self, source: str, line: int | None, message: str) -> None:
        super().__init__(message)
        self.source = source
        self.line = line
        self.message = message

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.message}"


class CaseFileProblems:
    """The problems of one file, in line order: the first PROBLEMS_SHOWN of them, and how
    many there are in all."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.first: list[CaseFileError] = []
        self.count = 0

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, error: CaseFileError) -> None:
        # Rows are read, then written, each in line order: a row the database refuses may
        # come before rows refused when reading.
        self.count += 1
        bisect.insort(self.first, error, key=lambda e: e.line or 0)
        del self.first[PROBLEMS_SHOWN:]

    def messages(self) -> list[str]:
        """Each problem shown, with its file and line, then how many more there are."""
        told = [str(error) for error in self.first]
        if self.count > len(self.first):
            more = _("… and %(count)d more problem(s) not shown") % {
                "count": self.count - len(self.first)
            }
            told.append(str(CaseFileError(self.source, None, more)))
        return told


@dataclass(frozen=True)
class CaseRecord:
    """One case as a file describes it, checked."""

    line: int
    title: str
    root_cause: str
    solution: str
    # What identifies the row between imports, with its file's path (case_record).
    content_hash: str
    fault_category: str | None = None
    error_code: str | None = None
    case_id: str | None = None
    session_id: str | None = None
    source_type: str | None = None
    created_by: str | None = None
    # The case this row's case is merged into, as the file names it.
    merged_into: str | None = None


def decode(data: bytes, source: str) -> str:
    """The file's text; a file that is not UTF-8 is refused, with where it breaks."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CaseFileError(
            source,
            line,
            _("not UTF-8 text (byte 0x%(byte)02x at offset %(offset)d); save the file as UTF-8")
            % {"byte": data[exc.start], "offset": exc.start},
        ) from None


def join_problems(problems: Iterable[str]) -> str:
    """Several problems told as one message, as clauses of one sentence: joined as the
    active language joins them, each but the last without its full stop."""
    told = list(problems)
    # Translators: between two problems told in one message (of a file's row or header).
    separator = _("; ")
    return separator.join([_FULL_STOP.sub("", problem) for problem in told[:-1]] + told[-1:])


def read_jsonl(
    text: str, source: str, *, categories: Collection[str] | None = None
) -> tuple[list[CaseRecord], CaseFileProblems]:
    """The file's good rows, and the problems of each bad one; a row's category is
    checked against `categories` (the taxonomy) when given."""
    check = CaseFileRow()
    records: list[CaseRecord] = []
    problems = CaseFileProblems(source)
    objects = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(CaseFileError(source, number, json_reason(exc)))
            continue
        except RecursionError:
            reason = _("objects or arrays nested too deeply")
            problems.add(
                CaseFileError(source, number, _("not valid JSON (%(reason)s)") % {"reason": reason})
            )
            continue
        if not isinstance(row, dict):
            problems.add(CaseFileError(source, number, _("each line must be a JSON object")))
            continue
        objects += 1
        try:
            records.append(case_record(row, source, number, check=check, categories=categories))
        except CaseFileError as exc:
            problems.add(exc)
    if problems and not objects:
        # Not one line is a JSON object: not JSON Lines at all (a JSON document, another
        # kind of file under this name), told by its first line.
        if _json_document(text):
            raise CaseFileError(
                source,
                1,
                _(
                    "a JSON document, not JSON Lines: write each case as one JSON object "
                    "on a line of its own"
                ),
            )
        raise problems.first[0]
    return records, problems


def read_csv(
    text: str, source: str, *, categories: Collection[str] | None = None
) -> tuple[list[CaseRecord], CaseFileProblems]:
    """The file's good rows, and the problems of each bad one (its category checked as
    read_jsonl checks it); CaseFileError when the file is not a CSV file of cases (its
    header)."""
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        _check_separator(text, source, header=[])
        reason = csv_reason(exc)
        raise CaseFileError(
            source, 1, _("not a CSV file (%(reason)s)") % {"reason": reason}
        ) from None
    if not header:
        raise CaseFileError(source, 1, _("empty file: the first line names the columns"))
    reader.fieldnames = _check_header(header, text, source)
    check = CaseFileRow()
    records: list[CaseRecord] = []
    problems = CaseFileProblems(source)
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            # Where the quoting breaks, the cells after it cannot be told apart: the rows
            # before are checked, the rest of the file is not read.
            reason = csv_reason(exc)
            problems.add(
                CaseFileError(source, start, _("not valid CSV (%(reason)s)") % {"reason": reason})
            )
            break
        if None in row:
            problems.add(CaseFileError(source, start, _("more cells than columns")))
        elif any(value for value in row.values()):
            try:
                records.append(_csv_record(row, source, start, check, categories))
            except CaseFileError as exc:
                problems.add(exc)
        start = reader.line_num + 1
    return records, problems


def _check_header(header: list[str], text: str, source: str) -> list[str | int]:
    """The columns' names, without the spaces around them, and each column without a name
    at the end of the header as its position (its cells must be empty); CaseFileError when
    they are not a case's columns, which makes every row wrong: told once."""
    names = [name.strip() for name in header]
    named = len(names)
    while named and not names[named - 1]:
        named -= 1
    # A column named twice would keep the later cell of each row and lose the other.
    repeated = [name for name, count in Counter(names).items() if count > 1 and name]
    unknown = [name for name in dict.fromkeys(names) if name and not _known(name)]
    unnamed = [position for position, name in enumerate(names[:named], start=1) if not name]
    missing = [name for name in REQUIRED_FIELDS if name not in names]
    wrong = []
    if repeated:
        wrong.append(_("repeated column(s): %(columns)s") % {"columns": ", ".join(repeated)})
    if unknown:
        wrong.append(_("unknown column(s): %(columns)s") % {"columns": ", ".join(unknown)})
    for position in unnamed:
        wrong.append(_("column %(position)d of the header has no name") % {"position": position})
    if missing:
        wrong.append(_("missing column(s): %(columns)s") % {"columns": ", ".join(missing)})
    if wrong:
        _check_separator(text, source, header=names)
        raise CaseFileError(source, 1, join_problems(wrong))
    return [*names[:named], *range(named + 1, len(names) + 1)]


def _check_separator(text: str, source: str, *, header: list[str]) -> None:
    """A first line that names more case columns split on ";" or a tab than the comma
    reader found in `header`: a file saved with another separator than the comma (as
    spreadsheets do in some languages), said so rather than as unknown columns or a
    quote the comma reader cannot read."""
    known = sum(_known(name) for name in header)
    for separator, told in (
        (";", _("columns are separated by ';': save the file as comma-separated CSV")),
        ("\t", _("columns are separated by tabs: save the file as comma-separated CSV")),
    ):
        try:
            cells = next(csv.reader(io.StringIO(text, newline=""), delimiter=separator))
        except (csv.Error, StopIteration):
            continue
        # A whole line quoted as one cell still has its separators inside.
        names = [name.strip() for cell in cells for name in cell.split(separator)]
        if sum(_known(name) for name in names) > known:
            raise CaseFileError(source, 1, told)


def _known(name: str) -> bool:
    return name in FIELDS or name in IGNORED_FIELDS


def _json_document(text: str) -> bool:
    """`text` is one JSON value written over several lines (one line is JSON Lines)."""
    if len(text.strip().splitlines()) < 2:
        return False
    try:
        json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def _csv_record(
    row: dict[str | int, str],
    source: str,
    line: int,
    check: CaseFileRow,
    categories: Collection[str] | None,
) -> CaseRecord:
    """A row's case; CaseFileError with everything wrong in it, column by column (a value
    under a column without a name, a formula-like cell, its field's rules)."""
    unnamed = _("column %(position)d has a value but no name in the header")
    found: dict[str | int, list[str]] = {}
    for key, value in row.items():
        # A column without a name is keyed by its position (_check_header), at the end.
        if isinstance(key, int) and value:
            found[key] = [unnamed % {"position": key}]
        elif isinstance(key, str) and value and _FORMULA.match(value):
            found[key] = [_formula(key, value)]
    # A row may end before the header does (a spreadsheet drops trailing empty cells): a
    # cell it does not have is an empty one.
    cells = {k: _spreadsheet_cell(v or "") for k, v in row.items() if isinstance(k, str)}
    return case_record(cells, source, line, check=check, categories=categories, found=found)


def case_record(
    row: dict[str, Any],
    source: str,
    line: int,
    *,
    check: CaseFileRow | None = None,
    categories: Collection[str] | None = None,
    found: dict[Any, list[str]] | None = None,
) -> CaseRecord:
    """The case a row gives, checked as `POST /api/cases` checks a case, and its category
    against `categories` (the taxonomy) when given; CaseFileError (file and line) telling
    all that is wrong in it with what was `found` in its cells, in the order of its keys
    (a key it lacks after them). A file's rows share one `check` (making the serializer
    is most of the cost of a row), as a `many=True` serializer's items do."""
    given = {k: v for k, v in row.items() if k not in IGNORED_FIELDS and not _empty(k, v)}
    case, rules = (check or CaseFileRow()).read(given)
    problems = found or {}
    for name, broken in rules.items():
        problems.setdefault(name, []).extend(f"{name}: {rule}" for rule in broken)
    category = case.get("faultCategory") or GENERAL_CATEGORY
    if categories is not None and "faultCategory" not in rules and category not in categories:
        unknown = _('faultCategory "%(category)s" is not in the taxonomy')
        problems.setdefault("faultCategory", []).append(unknown % {"category": category})
    if problems:
        position = {key: number for number, key in enumerate(row)}
        keys = sorted(problems, key=lambda key: position.get(key, len(position)))
        told = join_problems(problem for key in keys for problem in problems[key])
        raise CaseFileError(source, line, told)
    return CaseRecord(
        line=line,
        title=case["title"],
        root_cause=case["rootCause"],
        solution=case["solution"],
        content_hash=_content_hash(given),
        fault_category=case.get("faultCategory"),
        error_code=case.get("errorCode"),
        case_id=case.get("caseId"),
        session_id=case.get("sessionId"),
        source_type=case.get("sourceType"),
        created_by=case.get("createdBy"),
        merged_into=case.get("mergedInto"),
    )


def _empty(name: str, value: Any) -> bool:
    # A field of ours without a value is left out; an unknown key is refused, even empty.
    return name in FIELDS and value in (None, "")


def _content_hash(given: dict[str, str]) -> str:
    # Of the text as the file gives it (the title trimmed), as every import has hashed it:
    # a file imported before reads as the same rows.
    content = [given["title"].strip(), given["rootCause"], given["solution"]]
    content += [given.get("faultCategory"), given.get("errorCode")]
    return hashlib.sha256(json.dumps(content, ensure_ascii=False).encode("utf-8")).hexdigest()


def _spreadsheet_cell(value: str) -> str:
    if value.startswith("'") and _FORMULA.match(value[1:]):
        return value[1:]
    return value


def _formula(name: str, value: str) -> str:
    return _(
        "%(column)s looks like a spreadsheet formula (%(start)s); "
        "start the cell with ' to keep it as text"
    ) % {"column": name, "start": repr(value[:20])}
