"""A runbook imported again writes only what its file changed since its last import, so
that a curator's fields stay: when the file was edited elsewhere, and when a new release
reads the same file differently (its first import after an upgrade)."""

import hashlib
import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from caselibrary.models import CaseImportSource, CaseLibrary, FaultCategory
from caselibrary.runbooks import normalise_text
from caselibrary.services.cases import case_update

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

RUNBOOK = """# TargetDown

## Symptoms

Prometheus cannot scrape a target: TargetDown fires for job payment-service.

## Root cause

The service's metrics port is closed after a deploy.

## Solution

1. Check the pod's readiness.
2. Roll back the deploy.

## Escalation

Page the payments on-call.
"""


def run(path: Path) -> str:
    out = io.StringIO()
    call_command("import_cases", str(path), stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def runbook(tmp_path) -> Path:  # type: ignore[no-untyped-def]
    FaultCategory.objects.get_or_create(code="GENERAL", defaults={"name": "通用"})
    path = tmp_path / "runbooks" / "TargetDown.md"
    path.parent.mkdir()
    path.write_text(RUNBOOK, "utf-8")
    run(path.parent)
    return path


def as_an_earlier_release_imported_it(case: CaseLibrary, reading: int) -> None:
    """The case and its source as a release reading runbooks under `reading` left them:
    the solution without the sections that reading dropped, the source's hash under it,
    and no record of what it read field by field."""
    raw = hashlib.sha256(normalise_text(RUNBOOK).encode()).hexdigest()
    CaseLibrary.objects.filter(pk=case.pk).update(
        solution="1. Check the pod's readiness.\n2. Roll back the deploy.",
        updated_at=timezone.now() - timezone.timedelta(days=2),
    )
    CaseImportSource.objects.filter(case=case).update(
        content_hash=hashlib.sha256(f"{reading}:{raw}".encode()).hexdigest(),
        read_fields={},
        imported_at=timezone.now() - timezone.timedelta(days=2),
    )


def test_a_runbook_edited_in_its_file_keeps_the_error_code_a_curator_changed(runbook) -> None:
    case = CaseLibrary.objects.get()
    case_update(case=case, updated_by="curator1", error_code="PAY-SCRAPE-01")
    runbook.write_text(RUNBOOK.replace("Roll back the deploy.", "Roll back the release."), "utf-8")

    out = run(runbook.parent)

    assert "0 cases were created, 1 updated" in out
    case.refresh_from_db()
    assert "Roll back the release." in case.solution
    assert case.error_code == "PAY-SCRAPE-01"


def test_a_field_both_the_file_and_a_curator_changed_takes_the_files_text(runbook) -> None:
    case = CaseLibrary.objects.get()
    case_update(case=case, updated_by="curator1", solution="1. 先看 readiness 探针。")
    runbook.write_text(RUNBOOK.replace("Roll back the deploy.", "Roll back the release."), "utf-8")

    run(runbook.parent)

    case.refresh_from_db()
    assert "Roll back the release." in case.solution


def test_the_first_import_under_a_new_reading_keeps_a_curated_case_as_it_is(runbook) -> None:
    case = CaseLibrary.objects.get()
    as_an_earlier_release_imported_it(case, reading=2)
    case_update(case=case, updated_by="curator1", error_code="PAY-SCRAPE-01")

    out = run(runbook.parent)

    assert "0 cases were created, 0 updated, 1 unchanged" in out
    case.refresh_from_db()
    assert (case.error_code, case.updated_by) == ("PAY-SCRAPE-01", "curator1")
    # From now on the file's own changes reach the case, and the curator's field stays.
    runbook.write_text(RUNBOOK.replace("Roll back the deploy.", "Roll back the release."), "utf-8")
    assert "1 updated" in run(runbook.parent)
    case.refresh_from_db()
    assert "Roll back the release." in case.solution
    assert case.error_code == "PAY-SCRAPE-01"


def test_the_first_import_under_a_new_reading_rereads_a_case_nobody_curated(runbook) -> None:
    case = CaseLibrary.objects.get()
    as_an_earlier_release_imported_it(case, reading=2)

    out = run(runbook.parent)

    assert "0 cases were created, 1 updated" in out
    case.refresh_from_db()
    assert "Page the payments on-call." in case.solution
    assert case.error_code == "TargetDown"


def test_the_release_before_can_still_record_a_source_after_a_rollback(runbook) -> None:
    case = CaseLibrary.objects.get()
    CaseImportSource.objects.all().delete()

    # The release before knows no fields-as-read column: its insert names the others only.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO case_import_source (case_id, source_path, content_hash, imported_at)"
            " VALUES (%s, %s, %s, %s)",
            [case.pk, "runbooks/TargetDown.md", "0" * 64, timezone.now()],
        )

    assert CaseImportSource.objects.get().read_fields is None
