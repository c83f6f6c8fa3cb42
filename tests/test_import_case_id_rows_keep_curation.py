"""A JSONL or CSV file whose rows name their cases (`caseId`, as `export_cases` writes
them) imported again unchanged, on a schedule, leaves alone what curators did to those
cases since, as a file without ids does; a row changed in the file still writes it."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from caselibrary.models import CaseLibrary
from caselibrary.services.cases import case_update
from tests.factories import FaultCategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

CASE_ID = "11111111-2222-4333-8444-555555555555"
ROW = {
    "caseId": CASE_ID,
    "title": "同步任务上游超时",
    "rootCause": "上游超时",
    "solution": "重跑任务",
    "faultCategory": "GENERAL",
}


def run(path: Path) -> str:
    out = io.StringIO()
    call_command("import_cases", str(path), stdout=out, stderr=io.StringIO())
    return out.getvalue()


def write(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def synced(tmp_path) -> Path:  # type: ignore[no-untyped-def]
    FaultCategoryFactory(code="GENERAL")
    path = write(tmp_path / "sync.jsonl", ROW)
    run(path)
    return path


def test_an_unchanged_file_of_named_cases_keeps_a_curators_edit(synced) -> None:
    case = CaseLibrary.objects.get(case_id=CASE_ID)
    case_update(case=case, updated_by="ops.curator", solution="重跑任务；先确认上游恢复")

    out = run(synced)

    assert "0 updated, 1 unchanged" in out
    case.refresh_from_db()
    assert case.solution == "重跑任务；先确认上游恢复"
    assert case.updated_by == "ops.curator"


def test_a_row_changed_in_the_file_still_writes_its_case(synced) -> None:
    case_update(
        case=CaseLibrary.objects.get(case_id=CASE_ID), updated_by="ops.curator", title="改过"
    )
    write(synced, ROW | {"solution": "重跑任务，并扩容"})

    out = run(synced)

    assert "1 updated" in out
    assert CaseLibrary.objects.get(case_id=CASE_ID).solution == "重跑任务，并扩容"


def test_two_named_cases_saying_the_same_in_one_file_are_both_imported(tmp_path) -> None:
    FaultCategoryFactory(code="GENERAL")
    twin = ROW | {"caseId": "22222222-2222-4333-8444-555555555555"}
    path = write(tmp_path / "twins.jsonl", ROW, twin)

    out = run(path)
    again = run(path)

    assert "2 cases were created" in out
    assert "0 updated, 2 unchanged" in again


def test_a_row_changed_in_one_field_keeps_a_curators_change_of_another(synced) -> None:
    case_update(
        case=CaseLibrary.objects.get(case_id=CASE_ID), updated_by="ops.curator", title="改过"
    )
    write(synced, ROW | {"solution": "重跑任务，并扩容"})

    run(synced)

    case = CaseLibrary.objects.get(case_id=CASE_ID)
    assert case.solution == "重跑任务，并扩容"
    assert case.title == "改过"
