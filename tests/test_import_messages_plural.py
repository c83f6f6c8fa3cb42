"""What an import says it did reads as English for one case or file and for several, on
the admin's import page and from import_cases: "1 case created", "0 cases created",
never "case(s)"."""

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from tests import case_import_files
from tests.case_import_files import ROW, jsonl, run
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

IMPORT = "/admin/caselibrary/caselibrary/import/"

# The taxonomy the rows are filed under, taken by name.
_taxonomy = case_import_files._taxonomy


def uploaded(client, *rows: dict, dry_run: bool = False) -> str:  # type: ignore[no-untyped-def]
    content = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    data = {"file": SimpleUploadedFile("cases.jsonl", content)}
    if dry_run:
        data["dry_run"] = "on"
    return text(client.post(IMPORT, data, follow=True))


def test_the_import_page_counts_one_case_and_several_in_english(admin_client) -> None:
    other = {**ROW, "title": "另一个"}

    dry = uploaded(admin_client, ROW, dry_run=True)
    first = uploaded(admin_client, ROW)
    again = uploaded(admin_client, ROW)
    two = uploaded(admin_client, ROW, other, {**ROW, "title": "第三个"})

    assert "Dry run: 1 case would be created, 0 updated, 0 unchanged." in dry
    assert "1 case created, 0 updated, 0 unchanged." in first
    assert "0 cases created, 0 updated, 1 unchanged." in again
    assert "2 cases created, 0 updated, 1 unchanged." in two
    assert "case(s)" not in dry + first + again + two


def test_import_cases_counts_one_file_and_case_and_several_in_english(tmp_path) -> None:
    one = jsonl(tmp_path / "one.jsonl", ROW)

    dry, _ = run(str(one), "--dry-run")
    first, _ = run(str(one))
    again, _ = run(str(one))

    assert "1 file: 1 case would be created, 0 updated, 0 unchanged, 0 files skipped" in dry
    assert "1 file: 1 case was created, 0 updated, 0 unchanged, 0 files skipped" in first
    assert "1 file: 0 cases were created, 0 updated, 1 unchanged, 0 files skipped" in again


def test_import_cases_counts_skipped_files_in_english(tmp_path) -> None:
    jsonl(tmp_path / "a-good.jsonl", ROW, {**ROW, "title": "另一个"})
    jsonl(tmp_path / "b-bad.jsonl", {**ROW, "faultCategory": "NOPE"})

    out = io.StringIO()
    with pytest.raises(CommandError, match=r"^1 file not imported: see above$"):
        call_command("import_cases", str(tmp_path), stdout=out, stderr=io.StringIO())

    assert "2 files: 2 cases were created, 0 updated, 0 unchanged, 1 file skipped" in out.getvalue()
    assert "(s)" not in out.getvalue()
