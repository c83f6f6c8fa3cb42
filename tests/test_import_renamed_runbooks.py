"""import_cases on a runbook folder after files moved: a runbook renamed or moved to
another folder is the same case, not a second one beside its stale first."""

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from caselibrary.models import CaseImportSource, CaseLibrary
from tests.factories import FaultCategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

BOOKS = Path(__file__).resolve().parent / "import_runbooks"


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


@pytest.fixture
def folder(tmp_path) -> Path:  # type: ignore[no-untyped-def]
    shutil.copytree(BOOKS, tmp_path / "runbooks")
    return tmp_path / "runbooks"


def run(path: Path) -> str:
    out = io.StringIO()
    call_command("import_cases", str(path), stdout=out, stderr=io.StringIO())
    return out.getvalue()


def case_of(path: Path) -> CaseLibrary:
    # A key is the path from the directory it was imported from: the end of this one's.
    where = path.resolve().as_posix()
    for source in CaseImportSource.objects.select_related("case"):
        if where == source.source_path or where.endswith("/" + source.source_path):
            return source.case
    raise AssertionError(f"no case imported from {path}")


def test_a_runbook_moved_to_another_folder_keeps_its_case(folder) -> None:
    old = folder / "postgresql-too-many-connections.md"
    run(folder)
    case = case_of(old)
    count = CaseLibrary.objects.count()
    (folder / "databases").mkdir()
    new = old.rename(folder / "databases" / "pg-connections.md")

    out = run(folder)

    assert "0 cases were created, 0 updated" in out
    assert CaseLibrary.objects.count() == count
    assert case_of(new) == case
    assert CaseImportSource.objects.filter(case=case).count() == 1


def test_a_runbook_renamed_and_edited_updates_its_case(folder) -> None:
    old = folder / "jvm-old-gen-filling-up.md"
    run(folder)
    case = case_of(old)
    new = folder / "jvm-heap.md"
    new.write_text(old.read_text("utf-8") + "\n\n## Solution\n\n9. 记录复盘。\n", "utf-8")
    old.unlink()

    out = run(folder)

    assert "0 cases were created, 1 updated" in out
    case.refresh_from_db()
    assert "记录复盘" in case.solution
    assert case_of(new) == case


def test_a_copied_runbook_whose_first_file_remains_is_a_case_of_its_own(folder) -> None:
    old = folder / "postgresql-too-many-connections.md"
    run(folder)
    count = CaseLibrary.objects.count()
    shutil.copy(old, folder / "copy-of-pg.md")

    out = run(folder)

    assert "1 case was created" in out
    assert CaseLibrary.objects.count() == count + 1
    assert case_of(old) != case_of(folder / "copy-of-pg.md")


def test_a_runbook_moved_renamed_and_edited_at_once_is_a_new_case(folder) -> None:
    old = folder / "jvm-old-gen-filling-up.md"
    run(folder)
    (folder / "java").mkdir()
    new = folder / "java" / "heap.md"
    new.write_text(old.read_text("utf-8") + "\n\n## Solution\n\n9. 记录复盘。\n", "utf-8")
    old.unlink()

    out = run(folder)

    assert "1 case was created" in out
    assert case_of(new) != CaseImportSource.objects.get(source_path__endswith=old.name).case


def test_a_folder_imported_again_from_another_working_directory_is_the_same_cases(
    folder, tmp_path, monkeypatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run(folder)  # known by their absolute paths: the folder is outside this directory
    count = CaseLibrary.objects.count()
    monkeypatch.chdir(tmp_path)

    out = run(Path("runbooks"))  # the same files, by their paths from here

    assert "0 cases were created" in out
    assert CaseLibrary.objects.count() == count


@pytest.fixture
def imported_from_two_places(folder, tmp_path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    """The folder imported from its parent, then from the folder above that (the same
    files known by other relative paths); the working directory left at the parent."""
    nested = tmp_path / "x"
    nested.mkdir()
    moved = Path(shutil.move(str(folder), nested / "runbooks"))
    monkeypatch.chdir(nested)
    run(Path("runbooks"))
    monkeypatch.chdir(tmp_path)
    run(Path("x/runbooks"))
    monkeypatch.chdir(nested)
    return moved


@pytest.mark.parametrize("where", ["another directory", "inside its folder"])
def test_a_runbook_retitled_and_imported_from_elsewhere_keeps_its_case(
    folder, tmp_path, monkeypatch, where: str
) -> None:
    monkeypatch.chdir(tmp_path)
    run(Path("runbooks"))
    book = folder / "postgresql-too-many-connections.md"
    case = case_of(book)
    count = CaseLibrary.objects.count()
    text = book.read_text("utf-8").split("\n", 1)
    book.write_text(f"{text[0]} (v2)\n{text[1]}\nMore detail: the gecko resolver.\n", "utf-8")
    if where == "inside its folder":
        monkeypatch.chdir(folder)
        out = run(Path(book.name))
    else:
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")
        out = run(folder)

    assert "0 cases were created, 1 updated" in out
    assert CaseLibrary.objects.count() == count
    case.refresh_from_db()
    assert case.title.endswith("(v2)")
    assert case_of(book) == case


def test_a_runbook_renamed_after_an_import_from_another_directory_keeps_its_case(
    imported_from_two_places,
) -> None:
    old = imported_from_two_places / "jvm-old-gen-filling-up.md"
    case = case_of(old)
    new = imported_from_two_places / "jvm-heap.md"
    new.write_text(old.read_text("utf-8") + "\n\n## Solution\n\n9. 记录复盘。\n", "utf-8")
    old.unlink()

    out = run(Path("runbooks"))

    assert "0 cases were created, 1 updated" in out
    assert case_of(new) == case


def test_a_copy_made_after_an_import_from_another_directory_leaves_the_first_its_case(
    imported_from_two_places,
) -> None:
    first = imported_from_two_places / "postgresql-too-many-connections.md"
    case = case_of(first)
    copy = imported_from_two_places / "copy-of-pg.md"
    shutil.copy(first, copy)

    out = run(Path("runbooks"))

    assert "1 case was created" in out
    assert case_of(first) == case
    assert case_of(copy) != case


def test_a_runbook_renamed_and_its_folder_imported_from_inside_keeps_its_case(
    folder, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run(Path("runbooks"))
    old = folder / "jvm-old-gen-filling-up.md"
    case = case_of(old)
    new = old.rename(folder / "jvm-heap.md")
    monkeypatch.chdir(folder)

    out = run(Path("."))

    assert "0 cases were created" in out
    assert case_of(new) == case
