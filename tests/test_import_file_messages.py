"""import_cases and the admin's upload tell what is wrong with a file's syntax in the
active language, where it is (line, and column when the parser knows it), and what to do:
a JSON line that does not parse, a CSV cell whose quotes break, a header cell without a
name, a header written with another separator than the comma."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseLibrary
from tests.factories import FaultCategoryFactory

pytestmark = pytest.mark.django_db

URL = "/admin/caselibrary/caselibrary/import/"
GOOD = '{"title": "磁盘写满", "rootCause": "日志未轮转", "solution": "清理"}'


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


def told(tmp_path, settings, language: str, name: str, content: str) -> list[str]:  # type: ignore[no-untyped-def]
    """What the command tells of the file, in `language`: its stderr, line by line."""
    settings.LANGUAGE_CODE = language
    path = tmp_path / name
    path.write_text(content, "utf-8")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_cases", str(path), stdout=io.StringIO(), stderr=err)
    assert not CaseLibrary.objects.exists()
    return err.getvalue().splitlines()


# --- JSON Lines: the parser's reason, in words, at its column ----------------------------

JSON_ERRORS = {
    "a comma missing": (
        '{"title": "a" "solution": "b"}',
        "column 15: expected ','",
        "第 15 列：此处应为 ','",
    ),
    "a colon missing": (
        '{"title" "a"}',
        "column 10: expected ':'",
        "第 10 列：此处应为 ':'",
    ),
    "a name without quotes": (
        "{title: 1}",
        "column 2: expected a name in double quotes",
        "第 2 列：此处应为用双引号括起的名称",
    ),
    "no value": (
        '{"title": }',
        "column 11: expected a value",
        "第 11 列：此处应为一个值",
    ),
    "text after the object": (
        GOOD + " x",
        "column 59: text after the end of the JSON value",
        "第 59 列：JSON 值结束之后还有其他内容",
    ),
    "a string not closed": (
        '{"title": "a}',
        "column 11: the string starting here has no closing quote",
        "第 11 列：从此处开始的字符串缺少结尾的双引号",
    ),
    "a tab in a string": (
        '{"title": "a\tb"}',
        "column 13: a control character (such as a tab) in a string; write it as \\t",
        "第 13 列：字符串中有控制字符（如制表符），应写成 \\t 这样的转义",
    ),
    "a Windows path": (
        '{"title": "C:\\data"}',
        "column 14: unknown escape after \\ in a string; write a \\ itself as \\\\",
        "第 14 列：字符串中 \\ 之后的转义无效；\\ 本身应写成 \\\\",
    ),
    "a short unicode escape": (
        '{"title": "\\u12"}',
        "column 13: \\u must be followed by 4 hexadecimal digits",
        "第 13 列：\\u 之后应为 4 位十六进制数字",
    ),
}


@pytest.mark.parametrize("kind", JSON_ERRORS)
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_json_line_that_does_not_parse_is_told_in_words_with_its_column(
    tmp_path, settings, language, kind
) -> None:
    line, english, chinese = JSON_ERRORS[kind]

    problems = told(tmp_path, settings, language, "cases.jsonl", f"{GOOD}\n{line}\n")

    if language == "en":
        assert problems == [f"skipped cases.jsonl:2: not valid JSON ({english})"]
    else:
        assert problems == [f"已跳过 cases.jsonl:2: 不是合法的 JSON（{chinese}）"]


@pytest.mark.parametrize(
    ("language", "problem"),
    [
        ("en", "skipped cases.jsonl:2: not valid JSON (objects or arrays nested too deeply)"),
        ("zh-hans", "已跳过 cases.jsonl:2: 不是合法的 JSON（对象或数组嵌套过深）"),
    ],
)
def test_a_json_line_nested_too_deeply_is_told_not_crashed_on(
    tmp_path, settings, language, problem
) -> None:
    problems = told(tmp_path, settings, language, "cases.jsonl", f"{GOOD}\n{'[' * 100_000}\n")

    assert problems == [problem]


def test_the_upload_page_tells_a_json_syntax_error_in_the_consoles_language(
    admin_client, settings
) -> None:
    content = f'{GOOD}\n{{"title" "a"}}\n'.encode()

    settings.LANGUAGE_CODE = "zh-hans"
    in_chinese = admin_client.post(URL, {"file": SimpleUploadedFile("cases.jsonl", content)})
    settings.LANGUAGE_CODE = "en"
    in_english = admin_client.post(URL, {"file": SimpleUploadedFile("cases.jsonl", content)})

    assert (in_chinese.status_code, in_english.status_code) == (400, 400)
    assert list(in_chinese.context["form"].errors["file"]) == [
        "cases.jsonl:2: 不是合法的 JSON（第 10 列：此处应为 ':'）"
    ]
    assert list(in_english.context["form"].errors["file"]) == [
        "cases.jsonl:2: not valid JSON (column 10: expected ':')"
    ]


# --- CSV: where the quoting breaks ---------------------------------------------------------

CSV_ERRORS = {
    "text after a closing quote": (
        'title,rootCause,solution\na,b,c\na,"b" x,c\n',
        "cases.csv:3: not valid CSV (a quoted cell has text after its closing quote; "
        'a " inside a quoted cell is written "")',
        "cases.csv:3: 不是合法的 CSV（带引号的单元格在结尾引号之后还有内容；"
        '带引号的单元格中的 " 应写成 ""）',
    ),
    "a quote never closed": (
        'title,rootCause,solution\na,b,c\na,"b,c\nd,e,f\n',
        "cases.csv:3: not valid CSV (a quote opened here is not closed before the end of the file)",
        "cases.csv:3: 不是合法的 CSV（此处打开的引号直到文件结尾都没有闭合）",
    ),
    "a quote never closed in a long file": (
        'title,rootCause,solution\na,"b,c\n' + "d,e,f\n" * 200_000,
        "cases.csv:2: not valid CSV (a cell longer than 1000000 characters; is a quote left open?)",
        "cases.csv:2: 不是合法的 CSV（有单元格超过 1000000 个字符；是否有引号没有闭合？）",
    ),
    "a header cell with text after its quote": (
        'title,"rootCause" x,solution\na,b,c\n',
        "cases.csv:1: not a CSV file (a quoted cell has text after its closing quote; "
        'a " inside a quoted cell is written "")',
        "cases.csv:1: 不是 CSV 文件（带引号的单元格在结尾引号之后还有内容；"
        '带引号的单元格中的 " 应写成 ""）',
    ),
}


@pytest.mark.parametrize("kind", CSV_ERRORS)
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_csv_whose_quotes_break_is_told_in_words(tmp_path, settings, language, kind) -> None:
    content, english, chinese = CSV_ERRORS[kind]

    problems = told(tmp_path, settings, language, "cases.csv", content)

    if language == "en":
        assert problems == [f"skipped {english}"]
    else:
        assert problems == [f"已跳过 {chinese}"]


# --- CSV: header cells without a name ------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "title,rootCause,solution,\n磁盘写满,日志未轮转,清理,\n",
        "title,rootCause,solution,,\n磁盘写满,日志未轮转,清理,,\n",
        "title,rootCause,solution,\n磁盘写满,日志未轮转,清理\n",
    ],
    ids=["one empty column", "two empty columns", "rows without the empty cell"],
)
def test_empty_columns_without_a_name_at_the_end_of_the_header_are_ignored(
    tmp_path, settings, content
) -> None:
    settings.LANGUAGE_CODE = "en"
    path = tmp_path / "cases.csv"
    path.write_text(content, "utf-8")

    call_command("import_cases", str(path), stdout=io.StringIO(), stderr=io.StringIO())

    assert list(CaseLibrary.objects.values_list("title", "solution")) == [("磁盘写满", "清理")]


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        (
            "en",
            [
                "skipped cases.csv:3: column 4 has a value but no name in the header",
                "skipped cases.csv:4: solution: This field is required; "
                "column 5 has a value but no name in the header",
            ],
        ),
        (
            "zh-hans",
            [
                "已跳过 cases.csv:3: 第 4 列有值，但表头中该列没有名称",
                "已跳过 cases.csv:4: solution: 该字段是必填项；第 5 列有值，但表头中该列没有名称",
            ],
        ),
    ],
)
def test_a_value_under_a_column_without_a_name_refuses_its_row(
    tmp_path, settings, language, expected
) -> None:
    content = "title,rootCause,solution,,\na,b,c,,\nd,e,f,high,\ng,h,,,x\n"

    assert told(tmp_path, settings, language, "cases.csv", content) == expected


@pytest.mark.parametrize(
    ("language", "problem"),
    [
        (
            "en",
            "skipped cases.csv:1: unknown column(s): severity; "
            "column 2 of the header has no name; column 4 of the header has no name",
        ),
        (
            "zh-hans",
            "已跳过 cases.csv:1: 未知的列：severity；表头第 2 列没有名称；表头第 4 列没有名称",
        ),
    ],
)
def test_a_header_cell_without_a_name_before_a_named_one_is_told_by_its_position(
    tmp_path, settings, language, problem
) -> None:
    content = "title, ,rootCause,,solution,severity\na,,b,,c,high\n"

    assert told(tmp_path, settings, language, "cases.csv", content) == [problem]


# --- CSV: another separator, its header quoted ----------------------------------------------


@pytest.mark.parametrize(
    ("content", "english", "chinese"),
    [
        (
            '"title";"rootCause";"solution"\n"a";"b";"c"\n',
            "columns are separated by ';': save the file as comma-separated CSV",
            "列之间用 ';' 分隔：请将文件另存为逗号分隔的 CSV",
        ),
        (
            '"title"\t"rootCause"\t"solution"\n"a"\t"b"\t"c"\n',
            "columns are separated by tabs: save the file as comma-separated CSV",
            "列之间用制表符分隔：请将文件另存为逗号分隔的 CSV",
        ),
        (
            'title;rootCause;solution;"notes, misc"\na;b;c;d\n',
            "columns are separated by ';': save the file as comma-separated CSV",
            "列之间用 ';' 分隔：请将文件另存为逗号分隔的 CSV",
        ),
    ],
    ids=["semicolons", "tabs", "semicolons and a comma in a cell"],
)
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_csv_with_another_separator_and_quoted_names_is_told_its_separator(
    tmp_path, settings, language, content, english, chinese
) -> None:
    problems = told(tmp_path, settings, language, "cases.csv", content)

    if language == "en":
        assert problems == [f"skipped cases.csv:1: {english}"]
    else:
        assert problems == [f"已跳过 cases.csv:1: {chinese}"]


def test_a_csv_cell_as_long_as_a_case_allows_is_imported(tmp_path, settings) -> None:
    # Longer than the csv module's default cell limit (131,072 characters); a case's
    # solution may hold 200,000.
    settings.LANGUAGE_CODE = "en"
    solution = "步骤" * 75_000
    path = tmp_path / "cases.csv"
    path.write_text(f'title,rootCause,solution\n磁盘写满,日志未轮转,"{solution}"\n', "utf-8")

    call_command("import_cases", str(path), stdout=io.StringIO(), stderr=io.StringIO())

    assert CaseLibrary.objects.get().solution == solution


def test_a_csv_cell_longer_than_a_case_allows_is_told_by_its_fields_rule(
    tmp_path, settings
) -> None:
    settings.LANGUAGE_CODE = "en"
    path = tmp_path / "cases.csv"
    path.write_text(f'title,rootCause,solution\n磁盘写满,日志未轮转,"{"x" * 200_001}"\n', "utf-8")

    problems = told(tmp_path, settings, "en", "cases.csv", path.read_text("utf-8"))

    assert len(problems) == 1
    assert problems[0].startswith("skipped cases.csv:2: solution: ")
    assert "200000" in problems[0]


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        (
            "en",
            "skipped cases.jsonl:1: a JSON document, not JSON Lines: "
            "write each case as one JSON object on a line of its own",
        ),
        (
            "zh-hans",
            "已跳过 cases.jsonl:1: 这是一个 JSON 文档，不是 JSON Lines："
            "每个案例应是单独一行的 JSON 对象",
        ),
    ],
)
def test_a_pretty_printed_json_document_named_jsonl_is_told_what_it_is(
    tmp_path, settings, language, expected
) -> None:
    content = json.dumps(
        [{"title": "磁盘写满", "rootCause": "日志未轮转", "solution": "清理"}], indent=2
    )

    assert told(tmp_path, settings, language, "cases.jsonl", content) == [expected]
