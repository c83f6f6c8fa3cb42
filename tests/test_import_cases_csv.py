"""import_cases and export_cases with CSV and other files: formulas, columns, encodings,
missing paths, and export then import."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseLibrary
from tests import case_import_files
from tests.case_import_files import failing, run
from tests.factories import CaseLibraryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

# Fixtures shared with the other modules, taken by name.
_taxonomy = case_import_files._taxonomy


def test_a_file_in_another_encoding_is_reported(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_bytes("title,rootCause,solution\n磁盘满,日志,清理\n".encode("gbk"))

    _, err = failing(str(path))

    assert "cases.csv:2: not UTF-8 text (byte 0xb4 at offset 25); save the file as UTF-8" in err
    assert not CaseLibrary.objects.exists()


def test_a_csv_file_with_the_api_fields(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(
        "title,rootCause,solution,faultCategory,errorCode\n"
        '交换机端口 flapping,"光模块老化\n导致链路抖动",- 更换光模块,NETWORK,\n'
        "Redis 连接超时,maxclients 打满,调大 maxclients,,\n",
        "utf-8",
    )

    out, _ = run(str(path))

    assert "2 cases were created" in out
    flapping = CaseLibrary.objects.get(title="交换机端口 flapping")
    assert (flapping.root_cause, flapping.solution, flapping.fault_category) == (
        "光模块老化\n导致链路抖动",
        "- 更换光模块",
        "NETWORK",
    )
    assert flapping.error_code is None
    assert CaseLibrary.objects.get(title="Redis 连接超时").fault_category == "GENERAL"


@pytest.mark.parametrize(
    "cell", ['=HYPERLINK("http://x")', "+1+2", "@SUM(A1)", "-2+3+cmd|' /C calc'!A0"]
)
def test_a_csv_cell_that_looks_like_a_formula_is_refused(tmp_path, cell) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(
        'title,rootCause,solution\nok,ok,ok\n"' + cell.replace('"', '""') + '",x,y\n', "utf-8"
    )

    _, err = failing(str(path))

    assert "cases.csv:3: title looks like a spreadsheet formula" in err
    assert not CaseLibrary.objects.exists()


def test_a_formula_kept_as_text_with_a_leading_apostrophe(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("title,rootCause,solution\n'=A1 在告警里出现,x,y\n", "utf-8")

    run(str(path))

    assert CaseLibrary.objects.get().title == "=A1 在告警里出现"


def test_a_csv_with_an_unknown_column_is_refused(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("title,rootCause,solution,severity\na,b,c,high\n", "utf-8")

    _, err = failing(str(path))

    assert "cases.csv:1: unknown column(s): severity" in err


def test_a_csv_naming_a_column_twice_is_refused_rather_than_keeping_one_of_its_cells(
    tmp_path,
) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(
        "title,errorCode,rootCause,solution,faultCategory,faultCategory,errorCode\n"
        "a,ORA-00060,b,c,DATABASE,NETWORK,\n",
        "utf-8",
    )

    _, err = failing(str(path))

    assert err.splitlines() == ["skipped cases.csv:1: repeated column(s): errorCode, faultCategory"]
    assert not CaseLibrary.objects.exists()


def test_a_csv_header_with_spaces_around_its_names_is_read_as_without_them(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(
        "title, rootCause , solution,\tfaultCategory\n"
        "交换机端口 flapping,光模块老化,更换光模块,NETWORK\n",
        "utf-8",
    )

    out, _ = run(str(path))

    assert "1 case was created" in out
    case = CaseLibrary.objects.get()
    assert (case.title, case.root_cause, case.solution, case.fault_category) == (
        "交换机端口 flapping",
        "光模块老化",
        "更换光模块",
        "NETWORK",
    )


def test_a_path_that_does_not_exist_is_one_clear_line(tmp_path) -> None:
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("import_cases", str(tmp_path / "nope"))


def test_export_then_import_reads_back_unchanged(tmp_path) -> None:
    # An automatic title is the question's first 100 characters: a space may end it.
    CaseLibraryFactory(title="自动案例 ", source_type="AUTO", diagnosis_id="sess-1")
    CaseLibraryFactory(title="人工案例", error_code="ORA-00060", fault_category="DATABASE")
    exported = tmp_path / "cases.jsonl"
    call_command("export_cases", "--output", str(exported), stdout=io.StringIO())
    before = sorted(CaseLibrary.objects.values(), key=lambda c: c["case_id"])

    out, _ = run(str(exported))

    assert "0 cases were created, 0 updated, 2 unchanged" in out
    assert sorted(CaseLibrary.objects.values(), key=lambda c: c["case_id"]) == before

    # Into an empty library: the same cases, ids and all.
    CaseLibrary.objects.all().delete()
    run(str(exported))
    fields = ("case_id", "diagnosis_id", "source_type", "fault_category", "error_code")
    fields += ("root_cause", "solution", "created_by")
    assert sorted(CaseLibrary.objects.values_list(*fields)) == sorted(
        tuple(c[f] for f in fields) for c in before
    )
    lines = exported.read_text("utf-8").splitlines()
    assert [json.loads(line)["title"] for line in lines] == ["自动案例 ", "人工案例"]
