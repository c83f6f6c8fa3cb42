"""Reading case files: JSONL and CSV with the API's case fields, each row checked, each
problem named with its file and line. Pure Python: the import service writes what these
return (caselibrary/services/imports.py); Markdown runbooks are read by
caselibrary/runbooks.py.

A row has `title`, `rootCause` and `solution`, and may have `caseId` (then it updates that
case: what `export_cases` writes), `sessionId`, `sourceType`, `faultCategory` and
`errorCode`. `createdBy`, `updatedBy`, `createdAt` and `updatedAt` are accepted and
ignored but `createdBy`, so an export reads back; any other key is an error.
"""

import csv
import hashlib
import io
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

# Written to a file but not read back: the database keeps its own times and editor.
IGNORED_FIELDS = frozenset({"updatedBy", "createdAt", "updatedAt"})
FIELDS = (
    "caseId",
    "sessionId",
    "sourceType",
    "faultCategory",
    "errorCode",
    "title",
    "rootCause",
    "solution",
    "createdBy",
)
REQUIRED = ("title", "rootCause", "solution")
MAX_LENGTHS = {
    "title": 255,
    "faultCategory": 64,
    "errorCode": 64,
    "sessionId": 64,
    "createdBy": 64,
    "rootCause": 200_000,
    "solution": 200_000,
}
SOURCE_TYPES = ("AUTO", "MANUAL")
_SESSION_ID = re.compile(r"\A[A-Za-z0-9._:-]{1,64}\Z")
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
    fault_category: str | None = None
    error_code: str | None = None
    case_id: str | None = None
    session_id: str | None = None
    source_type: str | None = None
    created_by: str | None = None

    @property
    def content_hash(self) -> str:
        content = [self.title, self.root_cause, self.solution, self.fault_category]
        content.append(self.error_code)
        encoded = json.dumps(content, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(encoded).hexdigest()


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
        records.append(_record(row, source, number, spreadsheet=False))
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
            cells = {key: value for key, value in row.items() if value != ""}
            records.append(_record(cells, source, start, spreadsheet=True))
        start = reader.line_num + 1
    return records


def _record(row: dict[str, Any], source: str, line: int, *, spreadsheet: bool) -> CaseRecord:
    def bad(message: str) -> CaseFileError:
        return CaseFileError(source, line, message)

    unknown = sorted(set(row) - set(FIELDS) - IGNORED_FIELDS)
    if unknown:
        raise bad(f"unknown field(s): {', '.join(unknown)}")
    values: dict[str, str | None] = {}
    for name in FIELDS:
        value = row.get(name)
        if value is None:
            values[name] = None
            continue
        if not isinstance(value, str):
            raise bad(f"{name} must be a string")
        if spreadsheet:
            value = _spreadsheet_cell(value, name, bad)
        if "\x00" in value:
            raise bad(f"{name} contains a NUL character")
        if len(value) > MAX_LENGTHS.get(name, 64):
            raise bad(f"{name} is longer than {MAX_LENGTHS.get(name, 64)} characters")
        values[name] = value
    for name in REQUIRED:
        if not (values[name] or "").strip():
            raise bad(f"{name} is missing or blank")
    if values["caseId"] is not None:
        try:
            values["caseId"] = str(uuid.UUID(values["caseId"]))
        except ValueError:
            raise bad("caseId is not a UUID") from None
    if values["sessionId"] is not None and not _SESSION_ID.match(values["sessionId"]):
        raise bad("sessionId must be 1-64 characters of A-Z a-z 0-9 . _ : -")
    if values["sourceType"] is not None and values["sourceType"] not in SOURCE_TYPES:
        raise bad(f"sourceType must be one of {', '.join(SOURCE_TYPES)}")
    return CaseRecord(
        line=line,
        title=values["title"].strip(),  # type: ignore[union-attr]
        root_cause=values["rootCause"],  # type: ignore[arg-type]
        solution=values["solution"],  # type: ignore[arg-type]
        fault_category=values["faultCategory"] or None,
        error_code=values["errorCode"] or None,
        case_id=values["caseId"],
        session_id=values["sessionId"] or None,
        source_type=values["sourceType"],
        created_by=values["createdBy"] or None,
    )


def _spreadsheet_cell(value: str, name: str, bad: Any) -> str:
    if value.startswith("'") and _FORMULA.match(value[1:]):
        return value[1:]
    if _FORMULA.match(value):
        raise bad(
            f"{name} looks like a spreadsheet formula ({value[:20]!r}); "
            "start the cell with ' to keep it as text"
        )
    return value


def formula_safe(value: str) -> str:
    """A cell a spreadsheet shows as text: what `read_csv` reads back unchanged."""
    return "'" + value if _FORMULA.match(value) else value
