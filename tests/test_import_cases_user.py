"""import_cases --user: who the cases are made by, checked once before any file is read."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseLibrary
from tests.factories import FaultCategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

ROW = {
    "title": "ORA-01555 snapshot too old",
    "rootCause": "Undo retention shorter than the longest query.",
    "solution": "Raise undo_retention.",
}


@pytest.fixture
def cases_file(tmp_path):  # type: ignore[no-untyped-def]
    FaultCategoryFactory(code="GENERAL")
    path = tmp_path / "u.jsonl"
    path.write_text(json.dumps(ROW) + "\n", "utf-8")
    return path


@pytest.mark.parametrize("user", ["", "   ", "x" * 65])
def test_a_user_that_is_empty_or_too_long_is_refused_naming_user_and_its_limit(
    cases_file, user: str
) -> None:
    err = io.StringIO()

    with pytest.raises(CommandError, match=r"^--user must be 1 to 64 characters, got "):
        call_command("import_cases", str(cases_file), "--user", user, stderr=err)

    # One error about the argument, not one per file and row.
    assert err.getvalue() == ""
    assert not CaseLibrary.objects.exists()


def test_a_user_of_64_characters_makes_the_cases(cases_file) -> None:
    call_command("import_cases", str(cases_file), "--user", "x" * 64, stdout=io.StringIO())

    assert CaseLibrary.objects.get().created_by == "x" * 64


def test_a_refused_user_is_told_in_the_commands_language(cases_file, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"

    with pytest.raises(CommandError) as refused:
        call_command("import_cases", str(cases_file), "--user", " ", stderr=io.StringIO())

    assert str(refused.value) == "--user 应为 1 到 64 个字符，收到的是 ''"
    assert not CaseLibrary.objects.exists()
