"""import_cases with JSONL: one manual case a row, again without change, dry runs, updates
and rows stored as the API stores them."""

import json
from pathlib import Path

import pytest

from caselibrary.models import CaseImportSource, CaseLibrary
from tests import case_import_files
from tests.case_import_files import ROW, failing, jsonl, run
from tests.factories import CaseLibraryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

# Fixtures shared with the other modules, taken by name.
_taxonomy = case_import_files._taxonomy


def test_a_jsonl_file_makes_one_manual_case_per_row(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", ROW, {**ROW, "title": "另一个", "errorCode": None})

    out, _ = run(str(path))

    assert "2 cases were created, 0 updated, 0 unchanged, 0 files skipped" in out
    case = CaseLibrary.objects.get(title=ROW["title"])
    assert (case.source_type, case.fault_category, case.error_code, case.created_by) == (
        "MANUAL",
        "DATABASE",
        "ERROR 1205",
        "import",
    )
    assert case.solution == ROW["solution"]
    assert Path(CaseImportSource.objects.get(case=case).source_path).resolve() == path.resolve()


def test_cases_as_the_api_lists_them_import_with_what_the_database_keeps_left_out(
    api, tmp_path
) -> None:
    kept = CaseLibraryFactory(title="磁盘写满", fault_category="GENERAL")
    rows = api.get("/api/cases").json()["results"]
    kept.delete()

    out, _ = run(str(jsonl(tmp_path / "from-api.jsonl", *rows)))

    assert "1 case was created" in out
    assert CaseLibrary.objects.get().title == "磁盘写满"


def test_importing_the_same_file_again_changes_nothing(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", ROW)
    run(str(path))
    before = list(CaseLibrary.objects.values())

    out, _ = run(str(path))

    assert "0 cases were created, 0 updated, 1 unchanged" in out
    assert list(CaseLibrary.objects.values()) == before


def test_dry_run_counts_and_writes_nothing(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", ROW, {**ROW, "title": "第二个"})

    out, _ = run(str(path), "--dry-run")

    assert "2 cases would be created" in out
    assert not CaseLibrary.objects.exists() and not CaseImportSource.objects.exists()


def test_a_bad_row_is_reported_with_file_and_line_and_the_file_is_not_imported(tmp_path) -> None:
    good = jsonl(tmp_path / "a-good.jsonl", ROW)
    path = tmp_path / "b-bad.jsonl"
    path.write_text(
        json.dumps(ROW, ensure_ascii=False)
        + "\n\n"
        + json.dumps({**ROW, "title": "第二个", "faultCategory": "NOPE"})
        + "\n",
        "utf-8",
    )

    out, err = failing(str(tmp_path))

    assert 'skipped b-bad.jsonl:3: faultCategory "NOPE" is not in the taxonomy' in err
    assert "1 case was created, 0 updated, 0 unchanged, 1 file skipped" in out
    assert list(CaseLibrary.objects.values_list("title", flat=True)) == [ROW["title"]]
    assert good.exists()


def test_a_row_with_a_case_id_updates_that_case(tmp_path) -> None:
    case = CaseLibraryFactory(title="旧标题")
    path = jsonl(tmp_path / "cases.jsonl", {**ROW, "caseId": case.case_id})

    out, _ = run(str(path))

    assert "0 cases were created, 1 updated" in out
    case.refresh_from_db()
    assert (case.title, case.updated_by) == (ROW["title"], "import")


def test_a_row_whose_session_already_has_a_case_is_reported(tmp_path) -> None:
    CaseLibraryFactory(diagnosis_id="sess-9")
    path = jsonl(tmp_path / "cases.jsonl", ROW, {**ROW, "title": "b", "sessionId": "sess-9"})

    _, err = failing(str(path))

    assert "cases.jsonl:2: another case has this sessionId or source" in err
    assert CaseLibrary.objects.count() == 1


def test_a_row_is_stored_as_the_api_stores_the_same_case(tmp_path, make_client) -> None:
    body = {
        "title": "  磁盘写满  ",
        "rootCause": "\n日志未轮转\n",
        "solution": " 清理并开启 logrotate ",
        "errorCode": "enospc",
    }
    made = make_client("curator").post("/api/cases", body, format="json").json()["caseId"]
    fields = ("title", "root_cause", "solution", "fault_category", "error_code", "source_type")
    by_api = CaseLibrary.objects.filter(case_id=made).values_list(*fields).get()

    run(str(jsonl(tmp_path / "cases.jsonl", body)))

    by_import = CaseLibrary.objects.exclude(case_id=made).values_list(*fields).get()
    assert by_import == by_api
    assert by_import[:3] == ("磁盘写满", "日志未轮转", "清理并开启 logrotate")


def test_an_empty_value_in_a_jsonl_row_is_no_value_as_in_a_csv_cell(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", {**ROW, "faultCategory": "", "errorCode": None})

    run(str(path))

    case = CaseLibrary.objects.get()
    assert (case.fault_category, case.error_code) == ("GENERAL", None)


def test_a_row_with_surrounding_spaces_imported_again_adds_no_second_case(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", {**ROW, "rootCause": ROW["rootCause"] + "\n"})
    run(str(path))

    out, _ = run(str(path))

    assert "0 cases were created, 0 updated, 1 unchanged" in out
    assert CaseLibrary.objects.count() == 1


def test_an_automatic_cases_answer_is_imported_as_written_blanks_around_it_too(
    tmp_path,
) -> None:
    # What export_cases writes of a case whose answer opens with an indented block.
    answer = "    $ df -h /data\n\n根因：磁盘写满。  \n"
    row = {**ROW, "rootCause": answer, "solution": answer, "sourceType": "AUTO"}
    path = jsonl(tmp_path / "cases.jsonl", row)

    run(str(path))

    case = CaseLibrary.objects.get()
    assert (case.root_cause, case.solution) == (answer, answer)
    out, _ = run(str(path))
    assert "1 unchanged" in out


def test_a_root_cause_of_blanks_only_is_refused_as_empty(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", {**ROW, "rootCause": " \n\t "})

    _, err = failing(str(path))

    assert "cases.jsonl:1: rootCause: " in err
    assert not CaseLibrary.objects.exists()
