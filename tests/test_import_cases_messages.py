"""What import_cases says of bad rows and files, and of the rules the API refuses a case for,
in English and in the console's Chinese."""

import json

import pytest

from caselibrary.models import CaseLibrary
from tests import case_import_files
from tests.case_import_files import ROW, failing, jsonl, run
from tests.factories import CaseLibraryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

# Fixtures shared with the other modules, taken by name.
_taxonomy = case_import_files._taxonomy


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
