"""import_cases and export_cases: JSONL and CSV with the API's case fields.

The command speaks LANGUAGE_CODE, as the admin does by default (Chinese); most tests read
it in English."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseImportSource, CaseLibrary
from tests.factories import CaseLibraryFactory, FaultCategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    for code in ("GENERAL", "DATABASE", "NETWORK"):
        FaultCategoryFactory(code=code)


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_cases", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def failing(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_cases", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


ROW = {
    "title": "MySQL 主从延迟导致读到旧数据",
    "rootCause": "从库 IO 线程落后，Seconds_Behind_Master 持续 > 300",
    "solution": "1. 检查大事务\n2. 开启并行复制",
    "faultCategory": "DATABASE",
    "errorCode": "ERROR 1205",
}


def test_a_jsonl_file_makes_one_manual_case_per_row(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", ROW, {**ROW, "title": "另一个", "errorCode": None})

    out, _ = run(str(path))

    assert "2 case(s) were created, 0 updated, 0 unchanged, 0 file(s) skipped" in out
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

    assert "1 case(s) were created" in out
    assert CaseLibrary.objects.get().title == "磁盘写满"


def test_importing_the_same_file_again_changes_nothing(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", ROW)
    run(str(path))
    before = list(CaseLibrary.objects.values())

    out, _ = run(str(path))

    assert "0 case(s) were created, 0 updated, 1 unchanged" in out
    assert list(CaseLibrary.objects.values()) == before


def test_dry_run_counts_and_writes_nothing(tmp_path) -> None:
    path = jsonl(tmp_path / "cases.jsonl", ROW, {**ROW, "title": "第二个"})

    out, _ = run(str(path), "--dry-run")

    assert "2 case(s) would be created" in out
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
    assert "1 case(s) were created, 0 updated, 0 unchanged, 1 file(s) skipped" in out
    assert list(CaseLibrary.objects.values_list("title", flat=True)) == [ROW["title"]]
    assert good.exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "cases.jsonl:1: not valid JSON"),
        ("[1, 2]", "cases.jsonl:1: each line must be a JSON object"),
        (json.dumps({**ROW, "title": " "}), "cases.jsonl:1: title: This field may not be blank."),
        (
            json.dumps({**ROW, "title": "x" * 256}),
            "cases.jsonl:1: title: Ensure this field has no more than 255 characters.",
        ),
        (json.dumps({**ROW, "colour": "red"}), "cases.jsonl:1: colour: Unknown field."),
        (json.dumps({**ROW, "caseId": "nope"}), "cases.jsonl:1: caseId: Must be a valid UUID."),
        (json.dumps({**ROW, "caseId": 12}), "cases.jsonl:1: caseId: Must be a valid UUID."),
        (json.dumps({**ROW, "solution": 3}), "cases.jsonl:1: solution: Must be a string."),
        (
            json.dumps({**ROW, "sourceType": "X"}),
            'cases.jsonl:1: sourceType: Unknown value "X". Allowed values: AUTO, MANUAL.',
        ),
        (
            json.dumps({**ROW, "sessionId": "a b"}),
            "cases.jsonl:1: sessionId: A sessionId is 1-64 characters of A-Z a-z 0-9 . _ : -,"
            ' not "." or "..".',
        ),
        (
            json.dumps({**ROW, "rootCause": "a\x00b"}),
            "cases.jsonl:1: rootCause: Null characters are not allowed.",
        ),
        (
            json.dumps({**ROW, "title": "\ud800"}),
            "cases.jsonl:1: title: Contains an unpaired surrogate.",
        ),
        (
            json.dumps({"rootCause": ROW["rootCause"], "solution": 3}),
            # In the order of its keys; the one it lacks after them.
            "cases.jsonl:1: solution: Must be a string; title: This field is required.",
        ),
    ],
)
def test_each_bad_row_says_what_is_wrong(tmp_path, line, message) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(line + "\n", "utf-8")

    _, err = failing(str(path))

    assert message in err
    assert not CaseLibrary.objects.exists()


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

    assert "2 case(s) were created" in out
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

    assert "1 case(s) were created" in out
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

    assert "0 case(s) were created, 0 updated, 2 unchanged" in out
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


def test_a_row_with_a_case_id_updates_that_case(tmp_path) -> None:
    case = CaseLibraryFactory(title="旧标题")
    path = jsonl(tmp_path / "cases.jsonl", {**ROW, "caseId": case.case_id})

    out, _ = run(str(path))

    assert "0 case(s) were created, 1 updated" in out
    case.refresh_from_db()
    assert (case.title, case.updated_by) == (ROW["title"], "import")


def test_a_row_whose_session_already_has_a_case_is_reported(tmp_path) -> None:
    CaseLibraryFactory(diagnosis_id="sess-9")
    path = jsonl(tmp_path / "cases.jsonl", ROW, {**ROW, "title": "b", "sessionId": "sess-9"})

    _, err = failing(str(path))

    assert "cases.jsonl:2: another case has this sessionId or source" in err
    assert CaseLibrary.objects.count() == 1


@pytest.mark.parametrize(
    "change",
    [
        {"title": " "},
        {"title": "x" * 256},
        {"rootCause": "x" * 200_001},
        {"solution": ["a list"]},
        {"faultCategory": "x" * 65},
        {"errorCode": 42},
        {"sessionId": "no such session"},
        {"colour": "red"},
    ],
)
def test_a_row_is_refused_for_the_rule_the_api_refuses_the_same_case_for(
    tmp_path, make_client, change
) -> None:
    response = make_client("curator").post("/api/cases", {**ROW, **change}, format="json")
    (field,) = change

    _, err = failing(str(jsonl(tmp_path / "cases.jsonl", {**ROW, **change})))

    assert response.status_code == 400
    (rule,) = response.json()["errors"][field]
    assert f"cases.jsonl:1: {field}: {rule}" in err
    assert not CaseLibrary.objects.exists()


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

    assert "0 case(s) were created, 0 updated, 1 unchanged" in out
    assert CaseLibrary.objects.count() == 1


def test_the_command_reports_in_the_consoles_default_language(tmp_path, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    jsonl(tmp_path / "a-good.jsonl", ROW)
    jsonl(tmp_path / "b-bad.jsonl", ROW, {**ROW, "title": "第二个", "faultCategory": "NOPE"})

    out, err = failing(str(tmp_path))

    assert "已跳过 b-bad.jsonl:2: faultCategory “NOPE” 不在故障分类中" in err
    assert "2 个文件：已新建 1 个案例，更新 0 个，0 个不变，跳过 1 个文件" in out
    again, _ = run(str(tmp_path / "a-good.jsonl"), "--dry-run")
    assert "1 个文件：将新建 0 个案例，更新 0 个，1 个不变，跳过 0 个文件" in again
    assert list(CaseLibrary.objects.values_list("title", flat=True)) == [ROW["title"]]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "cases.jsonl:1: 不是合法的 JSON（第 1 列：此处应为一个值）"),
        ("[1, 2]", "cases.jsonl:1: 每一行必须是一个 JSON 对象"),
        (json.dumps({**ROW, "title": " "}), "cases.jsonl:1: title: 该字段不能为空。"),
        (
            json.dumps({**ROW, "title": "x" * 256}),
            "cases.jsonl:1: title: 请确保这个字段不能超过 255 个字符。",
        ),
        (json.dumps({**ROW, "colour": "red"}), "cases.jsonl:1: colour: 未知字段。"),
        (json.dumps({**ROW, "caseId": "nope"}), "cases.jsonl:1: caseId: 必须是有效的 UUID。"),
        (json.dumps({**ROW, "solution": 3}), "cases.jsonl:1: solution: 必须是字符串。"),
        (
            json.dumps({**ROW, "sourceType": "X"}),
            "cases.jsonl:1: sourceType: 未知的值“X”。允许的值：AUTO, MANUAL。",
        ),
        (
            json.dumps({**ROW, "sessionId": "a b"}),
            "cases.jsonl:1: sessionId: sessionId 应为 1-64 个字符，只能包含 A-Z a-z 0-9 . _ : -，"
            "且不能是 . 或 ..。",
        ),
        (
            json.dumps({**ROW, "title": "\ud800"}),
            "cases.jsonl:1: title: 含有未配对的代理字符（surrogate）。",
        ),
    ],
    ids=[
        "json",
        "object",
        "blank",
        "too long",
        "unknown field",
        "uuid",
        "string",
        "choice",
        "session id",
        "surrogate",
    ],
)
def test_each_bad_row_says_what_is_wrong_in_chinese(tmp_path, settings, line, message) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    path = tmp_path / "cases.jsonl"
    path.write_text(line + "\n", "utf-8")

    _, err = failing(str(path))

    assert f"已跳过 {message}" in err
    assert not CaseLibrary.objects.exists()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("cases.csv", "title,rootCause,solution\na,b,c,d\n", "cases.csv:2: 单元格数多于列数"),
        ("cases.csv", "title,rootCause\na,b\n", "cases.csv:1: 缺少的列：solution"),
        ("cases.csv", "", "cases.csv:1: 空文件：第一行应写出各列的列名"),
        (
            "cases.csv",
            "title,rootCause,solution\n=1+1,x,y\n",
            "cases.csv:2: title 看起来是电子表格公式（'=1+1'）；"
            "若要作为文本保留，请在单元格开头加 '",
        ),
        ("notes.md", "\n只是笔记\n", "notes.md:2: 没有标题：运维手册应以 '# ' 标题开头"),
        ("cases.txt", "x\n", "cases.txt: 不是案例文件（应为 .jsonl、.csv 或 .md）"),
        (
            "disk.md",
            "# 磁盘满\n\n## 处理步骤\n清理\n",
            "disk.md: 没有现象或根因章节（现象 / 根因 / root cause）",
        ),
        (
            "cases.csv",
            "title;rootCause;solution\na;b;c\n",
            "cases.csv:1: 列之间用 ';' 分隔：请将文件另存为逗号分隔的 CSV",
        ),
        (
            "cases.csv",
            "title\trootCause\tsolution\na\tb\tc\n",
            "cases.csv:1: 列之间用制表符分隔：请将文件另存为逗号分隔的 CSV",
        ),
        (
            "cases.csv",
            "title,rootCause,solution,faultCategory,faultCategory\na,b,c,DATABASE,\n",
            "cases.csv:1: 重复的列：faultCategory",
        ),
    ],
    ids=[
        "cells",
        "columns",
        "empty",
        "formula",
        "no title",
        "other kind",
        "no root cause",
        "semicolons",
        "tabs",
        "a column twice",
    ],
)
def test_each_bad_file_says_what_is_wrong_in_chinese(
    tmp_path, settings, name, content, message
) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    path = tmp_path / name
    path.write_text(content, "utf-8")

    _, err = failing(str(path))

    assert f"已跳过 {message}" in err
    assert not CaseLibrary.objects.exists()


def test_a_session_that_already_has_a_case_is_reported_in_chinese(tmp_path, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    CaseLibraryFactory(diagnosis_id="sess-9")
    path = jsonl(tmp_path / "cases.jsonl", {**ROW, "sessionId": "sess-9"})

    _, err = failing(str(path))

    assert "cases.jsonl:1: 已有另一个案例使用此 sessionId 或来源" in err
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
