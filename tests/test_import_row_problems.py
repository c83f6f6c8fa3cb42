"""A bad row of an imported file is told with everything wrong in it at once (spreadsheet
formulas, each field's rule, a category not in the taxonomy), in the order of its columns
and joined as the reader's language joins clauses, by import_cases and the admin's upload."""

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseImportSource, CaseLibrary, FaultCategory
from tests.factories import FaultCategoryFactory

pytestmark = pytest.mark.django_db

URL = "/admin/caselibrary/caselibrary/import/"
# Line 2 lacks its title; line 3 has a formula and a category not in the taxonomy; line 4
# is good (and not written, its file having bad rows).
CSV = (
    "title,rootCause,solution,faultCategory\n"
    '"",x,y,GENERAL\n'
    "ok title,=1+1,y,NOPE\n"
    "好的,根因,处理,\n"
)
TOLD = {
    "en": [
        "cases.csv:2: title: This field is required.",
        "cases.csv:3: rootCause looks like a spreadsheet formula ('=1+1'); start the cell "
        'with \' to keep it as text; faultCategory "NOPE" is not in the taxonomy',
    ],
    "zh-hans": [
        "cases.csv:2: title: 该字段是必填项。",
        "cases.csv:3: rootCause 看起来是电子表格公式（'=1+1'）；"
        "若要作为文本保留，请在单元格开头加 '；faultCategory “NOPE” 不在故障分类中",
    ],
}
SKIPPED = {"en": "skipped ", "zh-hans": "已跳过 "}


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


def told(settings, language: str, path: Path, *options: str) -> list[str]:
    """What import_cases tells of `path` in `language`, each line without its "skipped"."""
    settings.LANGUAGE_CODE = language
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_cases", str(path), *options, stdout=io.StringIO(), stderr=err)
    return [line.removeprefix(SKIPPED[language]) for line in err.getvalue().splitlines()]


def shown(admin_client, settings, language: str, name: str, content: str) -> list[str]:
    """What the admin's upload page shows of the file in `language`."""
    settings.LANGUAGE_CODE = language
    response = admin_client.post(URL, {"file": SimpleUploadedFile(name, content.encode())})
    assert response.status_code == 400
    return list(response.context["form"].errors["file"])


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("dry_run", [False, True], ids=["import", "dry run"])
def test_the_command_tells_a_rows_formula_and_its_unknown_category_together(
    tmp_path, settings, language, dry_run
) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(CSV, "utf-8")

    assert told(settings, language, path, *(["--dry-run"] if dry_run else [])) == TOLD[language]
    assert not CaseLibrary.objects.exists()
    assert not CaseImportSource.objects.exists()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_upload_page_tells_a_rows_formula_and_its_unknown_category_together(
    admin_client, settings, language
) -> None:
    assert shown(admin_client, settings, language, "cases.csv", CSV) == TOLD[language]
    assert not CaseLibrary.objects.exists()


ALL_WRONG_CSV = "title,rootCause,solution,faultCategory\n,=1+1,y,NOPE\n"
ALL_WRONG_TOLD = {
    "en": [
        "cases.csv:2: title: This field is required; rootCause looks like a spreadsheet "
        "formula ('=1+1'); start the cell with ' to keep it as text; "
        'faultCategory "NOPE" is not in the taxonomy'
    ],
    "zh-hans": [
        "cases.csv:2: title: 该字段是必填项；rootCause 看起来是电子表格公式（'=1+1'）；"
        "若要作为文本保留，请在单元格开头加 '；faultCategory “NOPE” 不在故障分类中"
    ],
}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_missing_title_a_formula_and_an_unknown_category_are_told_in_column_order(
    tmp_path, admin_client, settings, language
) -> None:
    path = tmp_path / "cases.csv"
    path.write_text(ALL_WRONG_CSV, "utf-8")

    expected = ALL_WRONG_TOLD[language]
    assert told(settings, language, path) == expected
    assert shown(admin_client, settings, language, "cases.csv", ALL_WRONG_CSV) == expected


# Its keys in this order: each problem is told in it.
JSONL = (
    json.dumps(
        {"colour": "red", "title": " ", "rootCause": 3, "solution": "y", "faultCategory": "NOPE"}
    )
    + "\n"
)
JSONL_TOLD = {
    "en": [
        "cases.jsonl:1: colour: Unknown field; title: This field may not be blank; "
        'rootCause: Must be a string; faultCategory "NOPE" is not in the taxonomy'
    ],
    "zh-hans": [
        "cases.jsonl:1: colour: 未知字段；title: 该字段不能为空；rootCause: 必须是字符串"
        "；faultCategory “NOPE” 不在故障分类中"
    ],
}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_json_line_tells_its_unknown_key_with_every_rule_it_breaks_and_its_category(
    tmp_path, admin_client, settings, language
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(JSONL, "utf-8")

    assert told(settings, language, path) == JSONL_TOLD[language]
    assert shown(admin_client, settings, language, "cases.jsonl", JSONL) == JSONL_TOLD[language]


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        (
            "en",
            "cases.jsonl:1: title: This field may not be blank; "
            'faultCategory "GENERAL" is not in the taxonomy',
        ),
        ("zh-hans", "cases.jsonl:1: title: 该字段不能为空；faultCategory “GENERAL” 不在故障分类中"),
    ],
)
def test_a_row_without_a_category_is_told_when_the_taxonomy_lacks_the_general_one(
    tmp_path, settings, language, expected
) -> None:
    FaultCategory.objects.filter(code="GENERAL").delete()
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"title": " ", "rootCause": "x", "solution": "y"}) + "\n", "utf-8")

    assert told(settings, language, path) == [expected]


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "cases.csv:2: rootCause: This field is required; solution: This field is required."),
        ("zh-hans", "cases.csv:2: rootCause: 该字段是必填项；solution: 该字段是必填项。"),
    ],
)
def test_a_rows_problems_are_joined_as_its_language_joins_clauses(
    admin_client, settings, language, expected
) -> None:
    content = "title,rootCause,solution\nx,,\n"

    assert shown(admin_client, settings, language, "cases.csv", content) == [expected]
