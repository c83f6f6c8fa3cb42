"""Merges through export_cases and import_cases: the export names the case each merged
case was merged into (`mergedInto`), and the import records that merge once the file's
rows are written, as the admin's merge does, the file saying which case is kept. A merge
the import cannot record leaves the row's case a case of its own, said for its row."""

import io
import json
import uuid
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseDuplicate, CaseLibrary, CaseMerge, CaseReuse
from caselibrary.selectors import cases_find
from caselibrary.services.duplicates import case_merge
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory, FaultCategoryFactory
from tests.near_duplicates import flag_near_duplicates, near_duplicate_pair

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

NEWER_TITLE = "订单库锁等待超时，下单失败"


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


def export(path: Path) -> list[dict]:
    call_command("export_cases", "--output", str(path), stdout=io.StringIO())
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_cases", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def row(case_id: str, title: str, **more: object) -> dict:
    return {"caseId": case_id, "title": title, "rootCause": "根因", "solution": "处理", **more}


def new_id() -> str:
    return str(uuid.uuid4())


def merges() -> list[tuple[str, str]]:
    return sorted(CaseMerge.objects.values_list("case_id", "merged_into"))


def flush_library() -> None:
    """The cases gone, as in an installation that never had them: the indexer lets their
    merges and passages go."""
    CaseLibrary.objects.all().delete()
    case_index_build()
    assert not CaseMerge.objects.exists()


def listed_ids(api) -> list[str]:  # type: ignore[no-untyped-def]
    return [case["caseId"] for case in api.get("/api/cases").json()["results"]]


def test_the_export_writes_every_case_merged_or_not_with_the_case_it_was_merged_into(
    tmp_path,
) -> None:
    older, newer, unrelated = CaseLibraryFactory.create_batch(3)
    flag_near_duplicates(newer, older)
    case_merge(case_id=newer.pk, other_id=older.pk, updated_by="ops.curator")

    rows = {r["caseId"]: r for r in export(tmp_path / "cases.jsonl")}

    assert set(rows) == {older.case_id, newer.case_id, unrelated.case_id}
    assert rows[newer.case_id]["mergedInto"] == older.case_id
    assert rows[older.case_id]["mergedInto"] is None
    assert rows[unrelated.case_id]["mergedInto"] is None


def test_a_merged_case_exported_and_imported_into_an_empty_library_stays_merged(
    api, tmp_path
) -> None:
    older, newer, unrelated = near_duplicate_pair()
    case_merge(case_id=newer.pk, other_id=older.pk, updated_by="ops.curator")
    exported = tmp_path / "cases.jsonl"
    export(exported)
    flush_library()

    out, err = run(str(exported))
    case_index_build()

    assert "3 cases were created, 0 updated, 0 unchanged, 1 merged" in out
    assert err == ""
    assert merges() == [(newer.case_id, older.case_id)]
    assert sorted(listed_ids(api)) == sorted([older.case_id, unrelated.case_id])
    assert api.get(f"/api/cases/{newer.case_id}").json()["mergedInto"] == older.case_id
    assert cases_find(query=NEWER_TITLE, limit=5).case_ids == [older.case_id]


def test_importing_the_same_export_again_changes_nothing(tmp_path) -> None:
    older, newer, _ = CaseLibraryFactory.create_batch(3)
    flag_near_duplicates(newer, older)
    case_merge(case_id=newer.pk, other_id=older.pk, updated_by="ops.curator")
    exported = tmp_path / "cases.jsonl"
    export(exported)
    before = (merges(), sorted(CaseLibrary.objects.values(), key=lambda c: c["case_id"]))

    out, err = run(str(exported))

    assert "1 file: 0 cases were created, 0 updated, 3 unchanged, 0 files skipped" in out
    assert err == ""
    assert (merges(), sorted(CaseLibrary.objects.values(), key=lambda c: c["case_id"])) == before


def test_the_file_says_which_case_is_kept_and_the_kept_case_takes_the_reuse_counts(
    tmp_path,
) -> None:
    older, newer, _ = near_duplicate_pair()
    assert CaseDuplicate.objects.filter(case_id=newer.case_id, similar_id=older.case_id).exists()
    CaseReuse.objects.create(case=older, l0_hits=2, sessions_useful=1)
    CaseReuse.objects.create(case=newer, l1_hits=3, sessions_useful=2, sessions_not_useful=1)
    rows = {r["caseId"]: r for r in export(tmp_path / "export.jsonl")}
    path = jsonl(tmp_path / "cases.jsonl", {**rows[older.case_id], "mergedInto": newer.case_id})

    out, _ = run(str(path))
    case_index_build()

    assert "0 cases were created, 0 updated, 1 unchanged, 1 merged" in out
    assert merges() == [(older.case_id, newer.case_id)]
    kept = CaseReuse.objects.get(case=newer)
    assert (kept.l0_hits, kept.l1_hits, kept.sessions_useful, kept.sessions_not_useful) == (
        2,
        3,
        3,
        1,
    )
    gone = CaseReuse.objects.get(case=older)
    assert (gone.l0_hits, gone.l1_hits, gone.sessions_useful) == (0, 0, 0)
    assert not CaseDuplicate.objects.exists()
    assert cases_find(query="订单库锁等待超时导致下单失败", limit=5).case_ids == [newer.case_id]


def test_a_row_merged_into_a_case_later_in_the_file_is_merged_into_it(tmp_path) -> None:
    merged, kept = new_id(), new_id()
    path = jsonl(
        tmp_path / "cases.jsonl",
        row(merged, "磁盘写满 (副本)", mergedInto=kept),
        row(kept, "磁盘写满"),
    )

    out, err = run(str(path))

    assert "2 cases were created, 0 updated, 0 unchanged, 1 merged" in out
    assert err == ""
    assert merges() == [(merged, kept)]


def test_a_row_without_a_case_id_is_merged_into_the_case_it_names(tmp_path) -> None:
    kept = CaseLibraryFactory()
    path = jsonl(
        tmp_path / "cases.jsonl",
        {"title": "磁盘写满", "rootCause": "日志", "solution": "清理", "mergedInto": kept.case_id},
    )

    run(str(path))

    assert merges() == [(CaseLibrary.objects.get(title="磁盘写满").case_id, kept.case_id)]


def test_a_row_naming_a_missing_case_is_imported_on_its_own_and_said_so(tmp_path) -> None:
    missing, alone, other = new_id(), new_id(), new_id()
    path = jsonl(
        tmp_path / "cases.jsonl",
        row(other, "另一个"),
        row(alone, "磁盘写满", mergedInto=missing),
    )

    out, err = run(str(path))

    assert err == (
        f'cases.jsonl:2: mergedInto: no case "{missing}" after the import; '
        "the row's case stays a case of its own\n"
    )
    assert "2 cases were created, 0 updated, 0 unchanged, 0 files skipped" in out
    assert CaseLibrary.objects.filter(case_id=alone).exists()
    assert not CaseMerge.objects.exists()


def test_a_row_naming_its_own_case_is_imported_on_its_own_and_said_so(tmp_path) -> None:
    alone = new_id()
    path = jsonl(tmp_path / "cases.jsonl", row(alone, "磁盘写满", mergedInto=alone))

    _, err = run(str(path))

    assert err == (
        "cases.jsonl:1: mergedInto: names the row's own case; "
        "the row's case stays a case of its own\n"
    )
    assert CaseLibrary.objects.filter(case_id=alone).exists()
    assert not CaseMerge.objects.exists()


def test_a_row_naming_a_case_that_is_itself_merged_is_imported_on_its_own_and_said_so(
    tmp_path,
) -> None:
    kept, merged = CaseLibraryFactory.create_batch(2)
    flag_near_duplicates(merged, kept)
    case_merge(case_id=merged.pk, other_id=kept.pk, updated_by="ops.curator")
    alone = new_id()
    path = jsonl(tmp_path / "cases.jsonl", row(alone, "磁盘写满", mergedInto=merged.case_id))

    _, err = run(str(path))

    assert err == (
        f'cases.jsonl:1: mergedInto: case "{merged.case_id}" is itself merged into '
        f'"{kept.case_id}"; the row\'s case stays a case of its own\n'
    )
    assert merges() == [(merged.case_id, kept.case_id)]


def test_a_row_naming_a_case_the_file_merges_elsewhere_is_said_so_whatever_the_order(
    tmp_path,
) -> None:
    first, middle, last = new_id(), new_id(), new_id()
    path = jsonl(
        tmp_path / "cases.jsonl",
        row(middle, "中间", mergedInto=last),
        row(first, "第一个", mergedInto=middle),
        row(last, "最后"),
    )

    _, err = run(str(path))

    assert err == (
        f'cases.jsonl:2: mergedInto: case "{middle}" is itself merged into "{last}"; '
        "the row's case stays a case of its own\n"
    )
    assert merges() == [(middle, last)]


def test_a_case_already_merged_elsewhere_keeps_the_librarys_merge_and_says_so(tmp_path) -> None:
    kept, merged, other = CaseLibraryFactory.create_batch(3)
    flag_near_duplicates(merged, kept)
    case_merge(case_id=merged.pk, other_id=kept.pk, updated_by="ops.curator")
    rows = {r["caseId"]: r for r in export(tmp_path / "export.jsonl")}
    path = jsonl(tmp_path / "cases.jsonl", {**rows[merged.case_id], "mergedInto": other.case_id})

    out, err = run(str(path))

    assert err == (
        f'cases.jsonl:1: mergedInto: the case is already merged into "{kept.case_id}", '
        f'not "{other.case_id}"; that merge is kept\n'
    )
    assert "0 cases were created, 0 updated, 1 unchanged, 0 files skipped" in out
    assert merges() == [(merged.case_id, kept.case_id)]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (7, "mergedInto: Must be a string."),
        ("x" * 37, "mergedInto: Ensure this field has no more than 36 characters."),
    ],
    ids=["not a string", "too long"],
)
def test_a_malformed_merged_into_is_a_row_problem(tmp_path, value, message) -> None:
    path = jsonl(tmp_path / "cases.jsonl", row(new_id(), "磁盘写满", mergedInto=value))

    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_cases", str(path), stdout=out, stderr=err)

    assert f"skipped cases.jsonl:1: {message}" in err.getvalue()
    assert not CaseLibrary.objects.exists()


def test_a_dry_run_counts_the_merges_and_writes_none(tmp_path) -> None:
    merged, kept = new_id(), new_id()
    path = jsonl(tmp_path / "cases.jsonl", row(merged, "副本", mergedInto=kept), row(kept, "原件"))

    out, _ = run(str(path), "--dry-run")

    assert "2 cases would be created, 0 updated, 0 unchanged, 1 would be merged" in out
    assert not CaseLibrary.objects.exists() and not CaseMerge.objects.exists()


def test_a_csv_file_with_a_merged_into_column_records_the_merge(tmp_path) -> None:
    merged, kept = new_id(), new_id()
    path = tmp_path / "cases.csv"
    path.write_text(
        "caseId,title,rootCause,solution,mergedInto\n"
        f"{kept},原件,根因,处理,\n"
        f"{merged},副本,根因,处理,{kept}\n",
        "utf-8",
    )

    run(str(path))

    assert merges() == [(merged, kept)]


def test_the_admins_import_page_keeps_merges_too(admin_client) -> None:
    merged, kept = new_id(), new_id()
    content = "".join(
        json.dumps(r, ensure_ascii=False) + "\n"
        for r in (row(merged, "副本", mergedInto=kept), row(kept, "原件"))
    ).encode()

    response = admin_client.post(
        "/admin/caselibrary/caselibrary/import/",
        {"file": SimpleUploadedFile("cases.jsonl", content)},
    )

    assert response.status_code == 302
    assert merges() == [(merged, kept)]


def test_the_admins_import_page_says_how_many_were_merged_and_which_rows_were_not(
    admin_client,
) -> None:
    merged, kept, missing = new_id(), new_id(), new_id()
    content = "".join(
        json.dumps(r, ensure_ascii=False) + "\n"
        for r in (
            row(merged, "副本", mergedInto=kept),
            row(kept, "原件"),
            row(new_id(), "孤儿", mergedInto=missing),
        )
    ).encode()

    response = admin_client.post(
        "/admin/caselibrary/caselibrary/import/",
        {"file": SimpleUploadedFile("cases.jsonl", content)},
        follow=True,
    )

    told = [str(message) for message in response.context["messages"]]
    assert told[0] == "3 cases created, 0 updated, 0 unchanged, 1 merged."
    assert told[1].startswith("cases.jsonl:3: mergedInto: ")
    assert missing in told[1]


def test_the_import_tells_a_merge_it_could_not_record_in_chinese_too(tmp_path, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    kept, merged, missing = new_id(), new_id(), new_id()
    path = jsonl(
        tmp_path / "cases.jsonl",
        row(kept, "原件"),
        row(merged, "副本", mergedInto=kept),
        row(new_id(), "孤儿", mergedInto=missing),
    )

    out, err = run(str(path))

    assert err == (
        f"cases.jsonl:3: mergedInto: 导入后不存在案例“{missing}”；该行的案例保留为独立案例\n"
    )
    assert "1 个文件：已新建 3 个案例，更新 0 个，0 个不变，合并 1 个，跳过 0 个文件" in out
