"""The bad-case export holds what readers said with their feedback (FeedbackEntry): each
entry's reason, comment and correction, newest first, one list a column."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from feedback.models import FeedbackEntry
from tests.factories import DiagnosisSessionFactory, FeedbackEntryFactory

pytestmark = pytest.mark.django_db

BOM = "\ufeff"
READER_COLUMNS = ["reader_reasons", "reader_comments", "reader_corrections"]


@pytest.fixture
def said_twice():  # type: ignore[no-untyped-def]
    """A bad case two readers wrote about: the earlier with a correction, the later with a
    comment only."""
    session = DiagnosisSessionFactory(not_useful=True, session_id="said-twice")
    earlier = FeedbackEntryFactory(
        session=session,
        reason="wrong_root_cause",
        comment="根因判断错了",
        correction="主从延迟导致读到旧数据",
    )
    FeedbackEntryFactory(session=session, reason="outdated", comment="=过时了", correction="")
    FeedbackEntry.objects.filter(pk=earlier.pk).update(
        created_at=timezone.now() - timedelta(hours=1)
    )
    return session


def jsonl_rows(capsys) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    call_command("export", "bad_cases", "--format", "jsonl")
    rows = map(json.loads, capsys.readouterr().out.splitlines())
    return {row["session_id"]: row for row in rows}


def test_the_json_lines_hold_every_readers_reason_comment_and_correction_newest_first(
    said_twice, capsys
) -> None:
    DiagnosisSessionFactory(not_useful=True, session_id="said-nothing")

    rows = jsonl_rows(capsys)

    said = rows["said-twice"]
    assert said["reader_reasons"] == ["outdated", "wrong_root_cause"]
    assert said["reader_comments"] == ["=过时了", "根因判断错了"]
    # An entry without a correction adds none: the earlier reader's is kept.
    assert said["reader_corrections"] == ["主从延迟导致读到旧数据"]
    assert [rows["said-nothing"][c] for c in READER_COLUMNS] == [[], [], []]


def test_the_reader_columns_follow_the_review_columns(said_twice, capsys) -> None:
    row = jsonl_rows(capsys)["said-twice"]

    # Then who has the bad case and its tags (tests/test_bad_case_export_owners.py).
    assert list(row)[-6:] == ["created_at", *READER_COLUMNS, "assignee", "tags"]


def test_the_csv_holds_them_as_json_lists_safe_from_spreadsheet_formulas(
    said_twice, admin_client
) -> None:
    response = admin_client.get("/admin/export/bad_cases.csv")

    (row,) = csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")))
    assert json.loads(row["reader_comments"]) == ["=过时了", "根因判断错了"]
    assert json.loads(row["reader_corrections"]) == ["主从延迟导致读到旧数据"]
    assert json.loads(row["reader_reasons"]) == ["outdated", "wrong_root_cause"]


def test_the_export_reads_the_entries_of_a_batch_at_once(
    monkeypatch, capsys, count_statements
) -> None:
    monkeypatch.setattr("feedback.exports.BATCH", 5)
    for n in range(12):
        session = DiagnosisSessionFactory(not_useful=True, session_id=f"bad-{n:02d}")
        FeedbackEntryFactory.create_batch(3, session=session)

    with count_statements() as counted:
        rows = jsonl_rows(capsys)

    assert len(rows) == 12
    assert all(len(row["reader_comments"]) == 3 for row in rows.values())
    # Three batches and the empty read that ends them, each with one read of the entries.
    assert len(counted.statements) <= 4 * 2
