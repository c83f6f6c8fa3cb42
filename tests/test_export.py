"""Exports of cases and bad cases: CSV and JSON Lines, streamed in primary-key batches."""

import csv
import io
import json
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from caselibrary.models import CaseReuse
from tests.factories import BadCaseReviewFactory, CaseLibraryFactory, DiagnosisSessionFactory
from tests.processes import ROOT, child_env

pytestmark = pytest.mark.django_db


def command(*args: str) -> str:
    out = io.StringIO()
    call_command("export", *args, stdout=out)
    return out.getvalue()


BOM = "\ufeff"


def test_the_admin_csv_export_starts_with_a_byte_order_mark_so_excel_reads_it_as_utf8(
    admin_client,
) -> None:
    CaseLibraryFactory(title="磁盘满了")

    body = b"".join(admin_client.get("/admin/export/cases.csv").streaming_content)

    assert body.startswith(BOM.encode())
    assert "磁盘满了" in body.decode("utf-8-sig")


def test_cases_export_as_csv_in_key_order_with_awkward_text_intact(capsys) -> None:
    awkward = CaseLibraryFactory(
        title='磁盘满了, "again"',
        root_cause="line one\nline two, with a comma",
        solution="1. 清理日志\n2. df -h",
        error_code="ENOSPC",
    )
    other = CaseLibraryFactory(title="plain")
    CaseReuse.objects.create(case=awkward, l0_hits=3, sessions_useful=2, stale=False)

    call_command("export", "cases")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out.removeprefix(BOM))))

    assert [r["case_id"] for r in rows] == sorted([awkward.case_id, other.case_id])
    row = next(r for r in rows if r["case_id"] == awkward.case_id)
    assert row["title"] == '磁盘满了, "again"'
    assert row["root_cause"] == "line one\nline two, with a comma"
    assert (row["error_code"], row["l0_hits"], row["sessions_useful"]) == ("ENOSPC", "3", "2")
    blank = next(r for r in rows if r["case_id"] == other.case_id)
    assert (blank["l0_hits"], blank["stale"]) == ("", "")


def test_bad_cases_export_as_json_lines_with_factors_and_review_state(capsys) -> None:
    DiagnosisSessionFactory(useful=True, evidence_score=65)  # not a bad case
    new = DiagnosisSessionFactory(not_useful=True, evidence_score=30, session_id="bad-new")
    reviewed = BadCaseReviewFactory(note="答案漏了根因", session__session_id="bad-seen")

    call_command("export", "bad_cases", "--format", "jsonl")
    lines = capsys.readouterr().out.splitlines()
    rows = {row["session_id"]: row for row in map(json.loads, lines)}

    assert set(rows) == {"bad-new", "bad-seen"}
    assert rows["bad-new"]["review_state"] == "new"
    assert rows["bad-new"]["evidence_score"] == 30
    assert rows["bad-new"]["self_evaluation"]["factors"] == new.self_evaluation["factors"]
    assert rows["bad-seen"]["review_state"] == "triaged"
    assert rows["bad-seen"]["review_note"] == "答案漏了根因"
    assert rows["bad-seen"]["reviewed_by"] == reviewed.reviewed_by
    assert list(rows["bad-new"]) == [
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
        "assignee",
        "tags",
    ]


def test_an_export_reads_in_batches_and_writes_each_row_once(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr("feedback.exports.BATCH", 2)
    cases = CaseLibraryFactory.create_batch(7)
    target = tmp_path / "cases.jsonl"

    call_command("export", "cases", "--format", "jsonl", "--output", str(target))

    ids = [json.loads(line)["case_id"] for line in target.read_text().splitlines()]
    assert ids == sorted(c.case_id for c in cases)


def test_an_export_to_a_file_says_how_many_rows_it_wrote_and_where(tmp_path) -> None:
    CaseLibraryFactory.create_batch(3)
    DiagnosisSessionFactory(not_useful=True)
    cases, bad_cases = tmp_path / "cases.csv", tmp_path / "bad_cases.jsonl"

    said = command("cases", "--output", str(cases))
    said_bad = command("bad_cases", "--format", "jsonl", "--output", str(bad_cases))

    assert said == f"3 case(s) written to {cases}\n"
    assert said_bad == f"1 bad case(s) written to {bad_cases}\n"
    assert len(list(csv.DictReader(io.StringIO(cases.read_text().removeprefix(BOM))))) == 3


def test_an_export_to_standard_output_is_the_data_alone(capsys) -> None:
    CaseLibraryFactory.create_batch(2)

    said = command("cases", "--format", "jsonl")

    assert said == ""
    assert len([json.loads(line) for line in capsys.readouterr().out.splitlines()]) == 2


def test_the_admin_streams_the_list_as_filtered(admin_client) -> None:
    DiagnosisSessionFactory(not_useful=True, session_id="open-one")
    BadCaseReviewFactory(session__session_id="triaged-one")

    response = admin_client.get("/admin/export/bad_cases.csv", {"review_state": "triaged"})

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(
        csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")))
    )
    assert [r["session_id"] for r in rows] == ["triaged-one"]


def test_the_case_list_links_to_its_exports(admin_client) -> None:
    page = admin_client.get("/admin/caselibrary/caselibrary/", {"still_general": "yes"})

    assert "/admin/export/cases.csv?still_general=yes" in page.content.decode()


def test_an_export_needs_the_view_permission_and_a_known_name(staff_client, admin_client) -> None:
    assert staff_client.get("/admin/export/cases.csv").status_code == 403
    assert admin_client.get("/admin/export/sessions.csv").status_code == 404
    assert admin_client.get("/admin/export/cases.xml").status_code == 404


FORMULAS = ['=HYPERLINK("http://evil.example","点我")', "+1+1", "-2+3", "@SUM(A1:A9)"]


@pytest.mark.parametrize("title", [*FORMULAS, "\tTAB", "\rCR"])
def test_a_title_a_spreadsheet_would_run_as_a_formula_is_exported_as_text_in_csv(
    capsys, title: str
) -> None:
    CaseLibraryFactory(title=title, error_code="-1")

    call_command("export", "cases")
    (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out.removeprefix(BOM)))

    assert row["title"] == "'" + title
    assert row["error_code"] == "'-1"


def test_json_lines_keep_such_a_title_as_it_is(capsys) -> None:
    CaseLibraryFactory(title=FORMULAS[0])

    call_command("export", "cases", "--format", "jsonl")

    assert json.loads(capsys.readouterr().out)["title"] == FORMULAS[0]


def test_the_admin_csv_export_escapes_formulas_too(admin_client) -> None:
    DiagnosisSessionFactory(not_useful=True, session_id="formula", query="=1+2")

    response = admin_client.get("/admin/export/bad_cases.csv")

    (row,) = csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig")))
    assert row["query"] == "'=1+2"
    assert row["session_id"] == "formula"


def test_an_unwritable_output_is_one_clear_error_and_writes_nothing(tmp_path) -> None:
    CaseLibraryFactory()
    target = tmp_path / "no-such-dir" / "cases.csv"

    with pytest.raises(CommandError, match="No such file or directory"):
        call_command("export", "cases", "--output", str(target))

    assert not target.parent.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_export_piped_into_a_reader_that_stops_early_ends_quietly() -> None:
    # Well over what a pipe buffers, so the export is still writing when the reader stops.
    CaseLibraryFactory.create_batch(40, root_cause="连接池耗尽。" * 400)

    export = subprocess.Popen(
        [sys.executable, "manage.py", "export", "cases"],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    export.stdout.read(100)  # `| head -c 100`
    export.stdout.close()
    stderr = export.stderr.read().decode()

    assert export.wait(timeout=60) == 0
    assert stderr == ""
