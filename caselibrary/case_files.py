"""Reading case files: JSONL and CSV with the API's case fields, each row checked by the
check of `POST /api/cases` itself (caselibrary/case_input.py), each problem named with its
file and line. The import service writes what these return (caselibrary/services/imports.py);
Markdown runbooks are read by caselibrary/runbooks.py and checked here as a row is
(`case_record`).

A row has `title`, `rootCause` and `solution`, and may have `caseId` (then it updates that
case: what `export_cases` writes), `sessionId`, `sourceType`, `faultCategory` and
`errorCode`. `createdBy`, `updatedBy`, `createdAt` and `updatedAt` are accepted and
ignored but `createdBy`, so an export reads back; any other key is an error. An empty
value (null, "", an empty cell) is no value.
"""

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from rest_framework.exceptions import ValidationError

from caselibrary.case_input import CaseFileRow

# Written to a file but not read back: the database keeps its own times and editor.
IGNORED_FIELDS = frozenset({"updatedBy", "createdAt", "updatedAt"})
FIELDS = tuple(CaseFileRow().fields)
# A spreadsheet runs a cell starting with = + @ (or - followed by a formula) when the file
# is opened: refused, unless the cell starts with ' (kept as text, the ' dropped).
_FORMULA = re.compile(r"\A(?:[=+@\t\r]|-[^\s-].*[(=!])", re.S)


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


def decode(data: bytes, source: str) -> str:
    """The file's text; a file that is not UTF-8 is refused, with where it breaks."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CaseFileError(
            source,
            line,
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8",
        ) from None


def read_jsonl(text: str, source: str) -> list[CaseRecord]:
    check = CaseFileRow()
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaseFileError(source, number, f"not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise CaseFileError(source, number, "each line must be a JSON object")
        records.append(case_record(row, source, number, check=check))
    return records


def read_csv(text: str, source: str) -> list[CaseRecord]:
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise CaseFileError(source, 1, f"not a CSV file ({exc})") from None
    if not header:
        raise CaseFileError(source, 1, "empty file: the first line names the columns")
    unknown = [name for name in header if name not in FIELDS and name not in IGNORED_FIELDS]
    if unknown:
        raise CaseFileError(source, 1, f"unknown column(s): {', '.join(unknown)}")
    check = CaseFileRow()
    records = []
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise CaseFileError(source, start, f"not valid CSV ({exc})") from None
        if None in row:
            raise CaseFileError(source, start, "more cells than columns")
        if any(value for value in row.values()):
            cells = {
                key: _spreadsheet_cell(key, value, source, start) for key, value in row.items()
            }
            records.append(case_record(cells, source, start, check=check))
        start = reader.line_num + 1
    return records


def case_record(
    row: dict[str, Any], source: str, line: int, *, check: CaseFileRow | None = None
) -> CaseRecord:
    """The case a row gives, checked as `POST /api/cases` checks a case; CaseFileError
    (file and line) when it is not one. A file's rows share one `check` (making the
    serializer is most of the cost of a row), as a `many=True` serializer's items do."""
    given = {k: v for k, v in row.items() if k not in IGNORED_FIELDS and not _empty(k, v)}
    try:
        # The field rules in English, as the API gives them (diagnosis/viewsets.py).
        with translation.override("en"):
            case = (check if check is not None else CaseFileRow()).run_validation(given)
    except ValidationError as exc:
        problems = [f"{name}: {rule}" for name, rules in exc.detail.items() for rule in rules]
        raise CaseFileError(source, line, "; ".join(problems)) from None
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


def _spreadsheet_cell(name: str, value: str, source: str, line: int) -> str:
    if value.startswith("'") and _FORMULA.match(value[1:]):
        return value[1:]
    if _FORMULA.match(value):
        raise CaseFileError(
            source,
            line,
            f"{name} looks like a spreadsheet formula ({value[:20]!r}); "
            "start the cell with ' to keep it as text",
        )
    return value


def formula_safe(value: str) -> str:
    """A cell a spreadsheet shows as text: what `read_csv` reads back unchanged."""
    return "'" + value if _FORMULA.match(value) else value
