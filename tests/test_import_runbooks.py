"""import_cases on a folder of Markdown runbooks: one case per runbook, found by its alert
names through the case search, and imported again without a change."""

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseImportSource, CaseLibrary
from caselibrary.runbooks import case_texts, parse_runbook
from tests.factories import FaultCategoryFactory

# The command speaks LANGUAGE_CODE (Chinese by default); these read it in English.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

TESTS = Path(__file__).resolve().parent
# The search test library's runbooks, and a few more of operations' own.
RUNBOOKS = (TESTS / "search_quality" / "runbooks", TESTS / "import_runbooks")


def source_of(path: Path) -> CaseImportSource:
    """The import source of a file, known by its path (from the working directory, or
    absolute outside it)."""
    for source in CaseImportSource.objects.all():
        if Path(source.source_path).resolve() == path.resolve():
            return source
    raise AssertionError(f"no import source for {path}")


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


@pytest.fixture
def library(tmp_path) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path / "runbooks"
    for source in RUNBOOKS:
        shutil.copytree(source, folder / source.name)
    return folder


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_cases", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def runbook_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.md"))


def test_a_folder_of_runbooks_becomes_one_case_each_found_by_alert_name(
    library, make_client, django_capture_on_commit_callbacks
) -> None:
    files = runbook_files(library)
    assert len(files) >= 30

    # The import's commit asks for the search index; the worker (inline here) builds it.
    with django_capture_on_commit_callbacks(execute=True):
        out = run(str(library))

    assert f"{len(files)} cases were created, 0 updated, 0 unchanged, 0 files skipped" in out
    assert CaseLibrary.objects.filter(source_type="MANUAL").count() == len(files)
    agent = make_client("agent")
    found_by_alert = 0
    for path in files:
        runbook = parse_runbook(path.read_text("utf-8"), source=path.name)
        case = source_of(path).case
        assert case.title == runbook.title
        assert (case.root_cause, case.solution) == case_texts(runbook)
        if not runbook.alert_names:
            continue
        # Searched by each of its alert names, the runbook's case comes back for at least
        # one of them (a runbook quoting another runbook's alert may rank second there).
        found = set()
        for alert in runbook.alert_names:
            response = agent.post("/api/cases/search", {"query": alert, "limit": 5}, format="json")
            assert response.status_code == 200
            found |= {hit["caseId"] for hit in response.json()["hits"]}
        assert case.case_id in found, f"no alert name of {path.name} finds it"
        found_by_alert += 1
    assert found_by_alert >= 30


def test_importing_the_folder_again_changes_nothing(library) -> None:
    files = runbook_files(library)
    run(str(library))
    before = sorted(CaseLibrary.objects.values_list("case_id", "title", "updated_at"))

    out = run(str(library))

    assert f"0 cases were created, 0 updated, {len(files)} unchanged" in out
    assert sorted(CaseLibrary.objects.values_list("case_id", "title", "updated_at")) == before


def test_a_dry_run_of_the_folder_writes_nothing(library) -> None:
    out = run(str(library), "--dry-run")

    assert f"{len(runbook_files(library))} cases would be created" in out
    assert not CaseLibrary.objects.exists() and not CaseImportSource.objects.exists()


def test_an_edited_runbook_updates_its_case(library) -> None:
    run(str(library))
    path = runbook_files(library)[0]
    case = source_of(path).case
    path.write_text(path.read_text("utf-8") + "\n\n## Solution\n\n6. 记录复盘。\n", "utf-8")

    out = run(str(library))

    assert "0 cases were created, 1 updated" in out
    case.refresh_from_db()
    assert "记录复盘" in case.solution
    assert CaseLibrary.objects.count() == len(runbook_files(library))


@pytest.fixture
def two_readmes(tmp_path) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """Two different runbooks with the same file name, in folders of their own."""
    books = sorted((TESTS / "import_runbooks").glob("*.md"))[:2]
    paths = []
    for folder, book in zip(("a", "b"), books, strict=True):
        (tmp_path / "rb" / folder).mkdir(parents=True)
        path = tmp_path / "rb" / folder / "README.md"
        shutil.copy(book, path)
        paths.append(path)
    return paths[0], paths[1]


def test_two_runbooks_of_one_name_imported_one_at_a_time_are_two_cases(two_readmes) -> None:
    first, second = two_readmes
    run(str(first))

    out = run(str(second))

    assert "1 case was created, 0 updated" in out
    titles = {parse_runbook(p.read_text("utf-8"), source=p.name).title for p in two_readmes}
    assert set(CaseLibrary.objects.values_list("title", flat=True)) == titles


def test_a_runbook_imported_alone_and_then_with_its_folder_is_one_case(two_readmes) -> None:
    first, _second = two_readmes
    run(str(first))

    out = run(str(first.parent.parent))

    assert "1 case was created, 0 updated, 1 unchanged" in out
    assert CaseLibrary.objects.count() == 2


def test_a_runbook_an_earlier_release_knew_by_its_name_is_found_and_kept_one(
    two_readmes,
) -> None:
    first, second = two_readmes
    run(str(first))
    CaseImportSource.objects.update(source_path="README.md")  # as an earlier release kept it

    again = run(str(first))
    other = run(str(second))

    assert "0 cases were created, 0 updated, 1 unchanged" in again
    assert "1 case was created, 0 updated" in other
    assert CaseLibrary.objects.count() == 2


def test_a_runbook_without_a_heading_is_reported_and_the_others_imported(library) -> None:
    (library / "zz-no-title.md").write_text("只是一些笔记，没有标题。\n\n- 重启\n", "utf-8")
    err = io.StringIO()

    with pytest.raises(CommandError):
        call_command("import_cases", str(library), stdout=io.StringIO(), stderr=err)

    assert "skipped zz-no-title.md:1: no title" in err.getvalue()
    assert CaseLibrary.objects.count() == len(runbook_files(library)) - 1


def test_a_runbook_in_another_encoding_is_reported(library) -> None:
    (library / "gbk.md").write_bytes(
        "# 磁盘满\n\n## 根因\n日志\n\n## 处理步骤\n清理\n".encode("gbk")
    )
    err = io.StringIO()

    with pytest.raises(CommandError):
        call_command("import_cases", str(library), stdout=io.StringIO(), stderr=err)

    assert "skipped gbk.md:1: not UTF-8 text" in err.getvalue()


def test_a_runbook_longer_than_a_case_may_hold_is_refused_as_the_api_would_refuse_it(
    library,
) -> None:
    (library / "huge.md").write_text(
        "# 磁盘满\n\n## 根因\n" + "日志未轮转。" * 40_000 + "\n\n## 处理步骤\n清理\n", "utf-8"
    )
    err = io.StringIO()

    with pytest.raises(CommandError):
        call_command("import_cases", str(library), stdout=io.StringIO(), stderr=err)

    assert (
        "skipped huge.md:1: rootCause: Ensure this field has no more than 200000 characters."
        in err.getvalue()
    )
    assert CaseLibrary.objects.count() == len(runbook_files(library)) - 1
    assert not CaseImportSource.objects.filter(source_path="huge.md").exists()
