"""The bad-case export says who has each bad case and how it is tagged, as the list's
filters do: `assignee` (the username, empty when nobody has it) and `tags` (a list, a JSON
array in the CSV cell), after every other column, read a batch at a time."""

import csv
import io
import json

import pytest
from django.core.management import call_command

from feedback.review_queues import bad_cases_assign, bad_cases_tag
from tests.admin_pages import reviewer_named
from tests.factories import DiagnosisSessionFactory, FeedbackEntryFactory

pytestmark = pytest.mark.django_db

COLUMNS_BEFORE = [
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
    "reader_reasons",
    "reader_comments",
    "reader_corrections",
]


@pytest.fixture
def owned():  # type: ignore[no-untyped-def]
    """A bad case assigned to ops.wang and tagged twice, and one nobody has."""
    wang = reviewer_named("ops.wang")
    DiagnosisSessionFactory(not_useful=True, session_id="bad-owned")
    DiagnosisSessionFactory(not_useful=True, session_id="bad-nobodys")
    bad_cases_assign(session_ids=["bad-owned"], assignee=wang)
    bad_cases_tag(session_ids=["bad-owned"], tag="db-lock")
    bad_cases_tag(session_ids=["bad-owned"], tag="dns")
    return wang


def jsonl_rows(capsys) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    call_command("export", "bad_cases", "--format", "jsonl")
    rows = map(json.loads, capsys.readouterr().out.splitlines())
    return {row["session_id"]: row for row in rows}


def csv_export(client) -> tuple[list[str], dict[str, dict]]:  # type: ignore[no-untyped-def]
    response = client.get("/admin/export/bad_cases.csv")
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode("utf-8-sig")
    header = next(csv.reader(io.StringIO(text)))
    rows = {row["session_id"]: row for row in csv.DictReader(io.StringIO(text))}
    return header, rows


def test_the_json_lines_say_who_has_each_bad_case_and_its_tags(owned, capsys) -> None:
    rows = jsonl_rows(capsys)

    assert (rows["bad-owned"]["assignee"], rows["bad-owned"]["tags"]) == (
        "ops.wang",
        ["db-lock", "dns"],
    )
    assert (rows["bad-nobodys"]["assignee"], rows["bad-nobodys"]["tags"]) == (None, [])


def test_the_owner_columns_come_after_every_column_the_export_had(owned, capsys) -> None:
    row = jsonl_rows(capsys)["bad-owned"]

    assert list(row) == [*COLUMNS_BEFORE, "assignee", "tags"]


def test_the_csv_holds_the_username_and_the_tags_as_a_json_list(owned, admin_client) -> None:
    header, rows = csv_export(admin_client)

    assert header == [*COLUMNS_BEFORE, "assignee", "tags"]
    assert rows["bad-owned"]["assignee"] == "ops.wang"
    assert json.loads(rows["bad-owned"]["tags"]) == ["db-lock", "dns"]
    assert rows["bad-nobodys"]["assignee"] == ""
    assert json.loads(rows["bad-nobodys"]["tags"]) == []


def test_the_export_filtered_by_assignee_or_tag_holds_the_rows_the_list_shows(
    owned, admin_client
) -> None:
    def exported(query: str) -> list[tuple[str, str | None, list[str]]]:
        response = admin_client.get(f"/admin/export/bad_cases.jsonl?{query}")
        assert response.status_code == 200
        lines = b"".join(response.streaming_content).splitlines()
        return [(row["session_id"], row["assignee"], row["tags"]) for row in map(json.loads, lines)]

    assert exported("tag=db-lock") == [("bad-owned", "ops.wang", ["db-lock", "dns"])]
    assert exported("assignee=none") == [("bad-nobodys", None, [])]


def test_the_export_reads_the_tags_of_a_batch_at_once(
    monkeypatch, capsys, count_statements
) -> None:
    monkeypatch.setattr("feedback.exports.BATCH", 5)
    wang = reviewer_named("ops.wang")
    for n in range(12):
        session = DiagnosisSessionFactory(not_useful=True, session_id=f"bad-{n:02d}")
        FeedbackEntryFactory(session=session)
    every = [f"bad-{n:02d}" for n in range(12)]
    bad_cases_assign(session_ids=every, assignee=wang)
    bad_cases_tag(session_ids=every, tag="db-lock")
    bad_cases_tag(session_ids=every, tag="dns")

    with count_statements() as counted:
        rows = jsonl_rows(capsys)

    assert len(rows) == 12
    assert all(row["tags"] == ["db-lock", "dns"] for row in rows.values())
    assert {row["assignee"] for row in rows.values()} == {"ops.wang"}
    # Three batches and the empty read that ends them, each batch with one read of the
    # readers' entries and one of the tags; the assignee comes with the rows.
    assert len(counted.statements) <= 4 * 3
