"""Exports of the case library and the bad cases, as CSV or JSON Lines, streamed.

Rows are read in primary-key batches (keyset, never OFFSET) and written out batch by
batch, so a million rows never sit in memory: the admin streams them to the browser, the
`export` command to a file or standard output. The same columns either way; in CSV, a
text cell that a spreadsheet would take for a formula starts with a single quote.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import F, QuerySet

from caselibrary.models import CaseLibrary
from caselibrary.selectors import case_merged_into
from diagnosis.selectors import EVIDENCE_SCORE
from diagnosis.self_evaluation import in_contract_order
from feedback.models import BadCase, BadCaseReview, FeedbackEntry
from feedback.selectors import REVIEW_STATE

BATCH = 2_000
FORMATS = ("csv", "jsonl")


@dataclass(frozen=True)
class Export:
    name: str
    columns: tuple[str, ...]
    key: str
    # The queryset annotated with every column that is not a field of its own.
    rows: Callable[[QuerySet], QuerySet]
    # The columns a batch's rows are given after they are read (by `complete`, one more
    # statement a batch, whatever its size), after the others.
    added: tuple[str, ...] = ()
    complete: Callable[[list[dict[str, Any]]], None] | None = None
    # Those of the added columns that `rows` annotates (read with the row, on its JOIN),
    # where they stand among the added ones.
    joined: tuple[str, ...] = ()


def _case_rows(queryset: QuerySet) -> QuerySet:
    # The reuse figures over one LEFT JOIN on the case_reuse primary key.
    return queryset.annotate(
        session_id=F("diagnosis_id"),
        l0_hits=F("reuse__l0_hits"),
        l1_hits=F("reuse__l1_hits"),
        sessions_useful=F("reuse__sessions_useful"),
        sessions_not_useful=F("reuse__sessions_not_useful"),
        stale=F("reuse__stale"),
        merged_into=case_merged_into(),
    )


def _bad_case_rows(queryset: QuerySet) -> QuerySet:
    return queryset.annotate(
        evidence_score=EVIDENCE_SCORE,
        review_state_value=REVIEW_STATE,
        review_note=F("review__note"),
        reviewed_by=F("review__reviewed_by"),
        reviewed_at=F("review__reviewed_at"),
        assignee=F("review__assignee__username"),
    )


# What readers said with their feedback (FeedbackEntry), one list a column: the reason,
# the comment and the correction of each entry that has one, newest first. All of them,
# not the last one's: a later verdict never erases an earlier reader's correction.
READER_COLUMNS = {
    "reader_reasons": "reason",
    "reader_comments": "comment",
    "reader_corrections": "correction",
}


def _completed_bad_cases(rows: list[dict[str, Any]]) -> None:
    """A batch of bad cases given what readers said, their review's tags, and their
    score in the contract's key order (the database may have reordered it)."""
    _with_reader_feedback(rows)
    _with_tags(rows)
    for row in rows:
        row["self_evaluation"] = in_contract_order(row["self_evaluation"])


def _with_reader_feedback(rows: list[dict[str, Any]]) -> None:
    said: dict[str, dict[str, list[str]]] = {
        row["session_id"]: {column: [] for column in READER_COLUMNS} for row in rows
    }
    entries = (
        FeedbackEntry.objects.filter(session_id__in=list(said))
        .order_by("session_id", "-created_at", "-id")
        .values_list("session_id", *READER_COLUMNS.values())
    )
    for session_id, *values in entries.iterator(chunk_size=BATCH):
        for column, value in zip(READER_COLUMNS, values, strict=True):
            if value:
                said[session_id][column].append(value)
    for row in rows:
        row.update(said[row["session_id"]])


def _with_tags(rows: list[dict[str, Any]]) -> None:
    """The names of the tags on each bad case's review, by name (a list, empty without).
    Only reviewed bad cases can have tags: a batch of unreviewed ones reads nothing more
    (without a review row, the LEFT JOIN gives NULL for its never-NULL note)."""
    tags: dict[str, list[str]] = {row["session_id"]: [] for row in rows}
    for row in rows:
        row["tags"] = tags[row["session_id"]]
    reviewed = [row["session_id"] for row in rows if row["review_note"] is not None]
    if not reviewed:
        return
    pairs = (
        BadCaseReview.tags.through.objects.filter(badcasereview_id__in=reviewed)
        .order_by("badcasereview_id", "reviewtag__name")
        .values_list("badcasereview_id", "reviewtag__name")
    )
    for session_id, name in pairs.iterator(chunk_size=BATCH):
        tags[session_id].append(name)


CASES = Export(
    name="cases",
    columns=(
        "case_id",
        "session_id",
        "source_type",
        "fault_category",
        "error_code",
        "title",
        "root_cause",
        "solution",
        "created_by",
        "updated_by",
        "created_at",
        "updated_at",
        "l0_hits",
        "l1_hits",
        "sessions_useful",
        "sessions_not_useful",
        "stale",
        # The kept case's id for a case merged into it (found through it); empty otherwise.
        "merged_into",
    ),
    key="case_id",
    rows=_case_rows,
)
BAD_CASES = Export(
    name="bad_cases",
    columns=(
        "session_id",
        "user_id",
        "query",
        "answer",
        "evidence_score",
        "self_evaluation",
        "review_state",
        "review_note",
        "reviewed_by",
        "reviewed_at",
        "feedback_at",
        "created_at",
    ),
    key="id",
    rows=_bad_case_rows,
    # Who has the bad case (a username, empty when nobody) and its tags come last: a
    # consumer reads the columns before them by position.
    added=(*READER_COLUMNS, "assignee", "tags"),
    complete=_completed_bad_cases,
    joined=("assignee",),
)
EXPORTS = {export.name: export for export in (CASES, BAD_CASES)}


def export_querysets() -> dict[str, QuerySet]:
    """Everything an export may read, before any filter."""
    return {"cases": CaseLibrary.objects.all(), "bad_cases": BadCase.objects.all()}


def export_rows(export: Export, queryset: QuerySet) -> Iterator[dict[str, Any]]:
    """The rows of `queryset` (filtered as the caller likes) in primary-key order,
    BATCH at a time."""
    last = None
    ordered = queryset.order_by(export.key)
    while True:
        page = ordered if last is None else ordered.filter(**{f"{export.key}__gt": last})
        keyed = export.rows(page).annotate(_key=F(export.key))
        batch = list(keyed.values(*_value_names(export), "_key")[:BATCH])
        if not batch:
            return
        for row in batch:
            last = row.pop("_key")
            if "review_state_value" in row:
                row["review_state"] = row.pop("review_state_value")
        if export.complete is not None:
            export.complete(batch)
        for row in batch:
            yield {column: row.get(column) for column in _all_columns(export)}


def _all_columns(export: Export) -> tuple[str, ...]:
    return export.columns + export.added


def _value_names(export: Export) -> list[str]:
    names = [c if c != "review_state" else "review_state_value" for c in export.columns]
    return [*names, *export.joined]


def export_lines(export: Export, rows: Iterable[dict[str, Any]], fmt: str) -> Iterator[str]:
    """The text of the export, a row (or the CSV header) at a time."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: one of {', '.join(FORMATS)}")
    if fmt == "jsonl":
        for row in rows:
            yield json.dumps({k: _plain(v) for k, v in row.items()}, ensure_ascii=False) + "\n"
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(values: Iterable[Any]) -> str:
        writer.writerow(values)
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    # A byte-order mark first: Excel, what most operators open a CSV with, reads a file
    # without one in the machine's code page and garbles the Chinese. import_cases and
    # Python's utf-8-sig read it as nothing.
    columns = _all_columns(export)
    yield "\ufeff" + line(columns)
    for row in rows:
        yield line(_csv_value(row[column]) for column in columns)


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


# A spreadsheet reads a cell that starts with one of these as a formula (or, for tab and
# carriage return, strips them and then may): a case title such as `=HYPERLINK(...)`
# would run when an operator opens the export. Wider than caselibrary/case_files.py
# _FORMULA on purpose: an export must be safe in any spreadsheet, so every leading "-" is
# quoted, where an import refuses only what is formula-like and accepts "-5 pods down".
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    value = _plain(value)
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        # A leading single quote makes the cell text; JSON Lines keeps the value as it is.
        return "'" + value
    return value
