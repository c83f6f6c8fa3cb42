"""import_cases and the admin's upload tell every bad row of a file at once (its file, line
and what is wrong), write nothing of that file, and tell a file wrong as a whole once."""

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseImportSource, CaseLibrary
from tests.factories import CaseLibraryFactory, FaultCategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

URL = "/admin/caselibrary/caselibrary/import/"
ROW = {"title": "磁盘写满", "rootCause": "日志未轮转", "solution": "清理并开启 logrotate"}


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    for code in ("GENERAL", "DATABASE"):
        FaultCategoryFactory(code=code)


def failing(*args: str, match: str | None = None) -> list[str]:
    """The problems the command tells (its stderr, line by line)."""
    err = io.StringIO()
    with pytest.raises(CommandError, match=match):
        call_command("import_cases", *args, stdout=io.StringIO(), stderr=err)
    return err.getvalue().splitlines()


def jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


# Rows 2 and 7 are good; the others are each wrong in their own way, some found reading
# the file and some only when the database is asked (the taxonomy, a session's one case).
BAD_CSV = (
    "title,rootCause,solution,faultCategory,sessionId\n"
    "好的一行,根因,处理,,\n"  # 2
    "=1+1,根因,处理,,\n"  # 3
    "没有处理,根因,,,\n"  # 4
    "分类不存在,根因,处理,NOPE,\n"  # 5
    "会话已有案例,根因,处理,,sess-9\n"  # 6
    "也是好的,根因,处理,DATABASE,\n"  # 7
)
EXPECTED = [
    "skipped cases.csv:3: title looks like a spreadsheet formula ('=1+1'); "
    "start the cell with ' to keep it as text",
    "skipped cases.csv:4: solution: This field is required.",
    'skipped cases.csv:5: faultCategory "NOPE" is not in the taxonomy',
    "skipped cases.csv:6: another case has this sessionId or source",
]


@pytest.mark.parametrize("dry_run", [False, True], ids=["import", "dry run"])
def test_every_bad_row_of_a_csv_is_told_in_one_run_and_nothing_of_it_is_written(
    tmp_path, dry_run
) -> None:
    CaseLibraryFactory(diagnosis_id="sess-9")
    path = tmp_path / "cases.csv"
    path.write_text(BAD_CSV, "utf-8")

    told = failing(str(path), *(["--dry-run"] if dry_run else []))

    assert told == EXPECTED
    assert CaseLibrary.objects.count() == 1
    assert not CaseImportSource.objects.exists()


def test_a_file_with_many_bad_rows_counts_as_one_file_not_imported(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", *[{**ROW, "title": " "}] * 3)

    told = failing(str(path), match=r"^1 file not imported: see above$")

    assert told == [
        f"skipped cases.jsonl:{n}: title: This field may not be blank." for n in (1, 2, 3)
    ]


def test_rows_after_one_the_database_refuses_are_still_checked(tmp_path) -> None:
    path = jsonl(
        tmp_path / "cases.jsonl",
        {**ROW, "sessionId": "sess-1"},
        {**ROW, "title": "同一会话", "sessionId": "sess-1"},
        {**ROW, "title": "好的"},
        {**ROW, "title": "分类不存在", "faultCategory": "NOPE"},
    )

    told = failing(str(path))

    assert told == [
        "skipped cases.jsonl:2: another case has this sessionId or source",
        'skipped cases.jsonl:4: faultCategory "NOPE" is not in the taxonomy',
    ]
    assert not CaseLibrary.objects.exists()


def test_a_file_wrong_on_every_row_shows_its_first_50_problems_and_counts_the_rest(
    tmp_path,
) -> None:
    path = jsonl(tmp_path / "cases.jsonl", *({**ROW, "colour": "red"} for _ in range(120)))

    told = failing(str(path))

    assert len(told) == 51
    assert told[0] == "skipped cases.jsonl:1: colour: Unknown field."
    assert told[49] == "skipped cases.jsonl:50: colour: Unknown field."
    assert told[50] == "skipped cases.jsonl: … and 70 more problem(s) not shown"


def test_the_problems_shown_are_the_first_by_line_wherever_they_are_found(tmp_path) -> None:
    # Row 1 is refused only when written, after the 60 rows refused when read.
    CaseLibraryFactory(diagnosis_id="sess-9")
    rows = [{**ROW, "sessionId": "sess-9"}] + [{**ROW, "title": " "}] * 60

    told = failing(str(jsonl(tmp_path / "cases.jsonl", *rows)))

    assert told[0] == "skipped cases.jsonl:1: another case has this sessionId or source"
    assert told[1] == "skipped cases.jsonl:2: title: This field may not be blank."
    assert told[50] == "skipped cases.jsonl: … and 11 more problem(s) not shown"


def test_a_row_with_several_things_wrong_tells_them_all(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("title,rootCause,solution\n=A1,@B2,\n", "utf-8")

    told = failing(str(path))

    assert told == [
        "skipped cases.csv:2: title looks like a spreadsheet formula ('=A1'); start the cell "
        "with ' to keep it as text; rootCause looks like a spreadsheet formula ('@B2'); start "
        "the cell with ' to keep it as text; solution: This field is required."
    ]


def test_a_csv_row_shorter_than_its_header_is_a_row_with_empty_cells(tmp_path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("title,rootCause,solution\na,b\n", "utf-8")

    told = failing(str(path))

    assert told == ["skipped cases.csv:2: solution: This field is required."]


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        (
            "cases.csv",
            "title,rootCause\n" + "a,b\n" * 500,
            "cases.csv:1: missing column(s): solution",
        ),
        (
            "cases.csv",
            "title;rootCause;solution\n" + "a;b;c\n" * 500,
            "cases.csv:1: columns are separated by ';': save the file as comma-separated CSV",
        ),
        (
            "cases.csv",
            "title\trootCause\tsolution\n" + "a\tb\tc\n" * 500,
            "cases.csv:1: columns are separated by tabs: save the file as comma-separated CSV",
        ),
        (
            "cases.csv",
            "title,rootCause,solution,faultCategory,faultCategory\n" + "a,b,c,DATABASE,\n" * 500,
            "cases.csv:1: repeated column(s): faultCategory",
        ),
        (
            "cases.jsonl",
            json.dumps([ROW] * 500, ensure_ascii=False, indent=2),
            "cases.jsonl:1: a JSON document, not JSON Lines: "
            "write each case as one JSON object on a line of its own",
        ),
    ],
    ids=["missing column", "semicolons", "tabs", "a column twice", "a JSON document"],
)
def test_a_file_wrong_as_a_whole_is_told_once(tmp_path, name, content, problem) -> None:
    path = tmp_path / name
    path.write_text(content, "utf-8")

    told = failing(str(path))

    assert told == [f"skipped {problem}"]


def test_every_bad_file_of_a_folder_is_told_and_the_good_ones_are_imported(tmp_path) -> None:
    jsonl(tmp_path / "a-bad.jsonl", {**ROW, "title": " "}, ROW, {**ROW, "solution": 3})
    jsonl(tmp_path / "b-good.jsonl", ROW)
    (tmp_path / "c-bad.csv").write_text("title,rootCause,solution\n=1,x,y\n,x,y\n", "utf-8")

    told = failing(str(tmp_path), match=r"^2 files not imported: see above$")

    assert told == [
        "skipped a-bad.jsonl:1: title: This field may not be blank.",
        "skipped a-bad.jsonl:3: solution: Must be a string.",
        "skipped c-bad.csv:2: title looks like a spreadsheet formula ('=1'); "
        "start the cell with ' to keep it as text",
        "skipped c-bad.csv:3: title: This field is required.",
    ]
    assert list(CaseLibrary.objects.values_list("title", flat=True)) == [ROW["title"]]


@pytest.mark.parametrize("dry_run", [False, True], ids=["import", "dry-run"])
def test_a_dry_run_of_a_folder_tells_what_the_import_would_between_its_files(
    tmp_path, dry_run
) -> None:
    # Each file is good alone; the second repeats the first's session.
    jsonl(tmp_path / "a.jsonl", {**ROW, "sessionId": "sess-2"})
    jsonl(tmp_path / "b.jsonl", {**ROW, "title": "同一会话", "sessionId": "sess-2"})

    told = failing(str(tmp_path), *(["--dry-run"] if dry_run else []))

    assert told == ["skipped b.jsonl:1: another case has this sessionId or source"]
    assert CaseLibrary.objects.count() == (0 if dry_run else 1)


def test_the_command_tells_every_problem_in_chinese(tmp_path, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    path = jsonl(tmp_path / "cases.jsonl", *({**ROW, "colour": "red"} for _ in range(52)))

    told = failing(str(path), match="1 个文件未导入：见上文")

    assert told[0] == "已跳过 cases.jsonl:1: colour: 未知字段。"
    assert told[49] == "已跳过 cases.jsonl:50: colour: 未知字段。"
    assert told[50] == "已跳过 cases.jsonl: ……另有 2 个问题未列出"


def test_a_runbook_without_either_section_tells_both(tmp_path) -> None:
    path = tmp_path / "disk.md"
    path.write_text("# 磁盘满\n\n## 备注\n\n", "utf-8")

    told = failing(str(path))

    assert told == [
        "skipped disk.md: no symptoms or root-cause section (现象 / 根因 / root cause); "
        "no solution section (处理步骤 / 解决方案 / solution)"
    ]


def upload(admin_client, content: bytes, name: str = "cases.csv"):  # type: ignore[no-untyped-def]
    return admin_client.post(URL, {"file": SimpleUploadedFile(name, content)})


def test_the_upload_page_shows_every_bad_row_in_the_consoles_language(
    admin_client, settings
) -> None:
    CaseLibraryFactory(diagnosis_id="sess-9")
    content = BAD_CSV.encode()

    settings.LANGUAGE_CODE = "zh-hans"  # the console's default
    in_chinese = upload(admin_client, content)
    settings.LANGUAGE_CODE = "en"
    in_english = upload(admin_client, content)

    assert (in_chinese.status_code, in_english.status_code) == (400, 400)
    assert list(in_chinese.context["form"].errors["file"]) == [
        "cases.csv:3: title 看起来是电子表格公式（'=1+1'）；若要作为文本保留，请在单元格开头加 '",
        "cases.csv:4: solution: 该字段是必填项。",
        "cases.csv:5: faultCategory “NOPE” 不在故障分类中",
        "cases.csv:6: 已有另一个案例使用此 sessionId 或来源",
    ]
    assert list(in_english.context["form"].errors["file"]) == [
        line.removeprefix("skipped ") for line in EXPECTED
    ]
    page = in_english.content.decode()
    assert page.count("<li>cases.csv:") == 4
    assert CaseLibrary.objects.count() == 1


def test_the_upload_page_counts_the_problems_it_does_not_show(admin_client, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    content = b"title,rootCause,solution\n" + b"x,,\n" * 80

    response = upload(admin_client, content)

    shown = list(response.context["form"].errors["file"])
    assert len(shown) == 51
    assert shown[0] == "cases.csv:2: rootCause: 该字段是必填项；solution: 该字段是必填项。"
    assert shown[50] == "cases.csv: ……另有 30 个问题未列出"
    assert not CaseLibrary.objects.exists()
