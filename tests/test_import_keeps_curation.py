"""Importing runbooks again (a scheduled sync of the team's runbook repository) keeps what
curators did to their cases: an unchanged file leaves its case alone, and a changed one
writes the fields its file changed since its last import and keeps a curator's others,
and the category a curator gave, which a runbook does not say; so does the first import
after a release that reads runbooks differently."""

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
    FaultCategory.objects.get_or_create(code="NETWORK", defaults={"name": "网络"})
    path = tmp_path / "runbooks" / "TargetDown.md"
    path.parent.mkdir()
    path.write_text(RUNBOOK, "utf-8")
    run(path.parent)
    return path


def test_an_unchanged_runbook_imported_again_keeps_a_curators_changes(runbook) -> None:
    case = CaseLibrary.objects.get()
    case_update(case=case, updated_by="curator1", fault_category="NETWORK", error_code="TargetDown")
    case_update(case=case, updated_by="curator1", solution="1. 先看 readiness 探针。")

    out = run(runbook.parent)

    assert "0 cases were created, 0 updated, 1 unchanged" in out
    case.refresh_from_db()
    assert (case.fault_category, case.solution, case.updated_by) == (
        "NETWORK",
        "1. 先看 readiness 探针。",
        "curator1",
    )


def test_a_changed_runbook_writes_its_texts_and_keeps_the_curators_category(runbook) -> None:
    case = CaseLibrary.objects.get()
    case_update(case=case, updated_by="curator1", fault_category="NETWORK")
    runbook.write_text(RUNBOOK.replace("Roll back the deploy.", "Roll back the release."), "utf-8")

    out = run(runbook.parent)

    assert "0 cases were created, 1 updated" in out
    case.refresh_from_db()
    assert "Roll back the release." in case.solution
    assert case.fault_category == "NETWORK"


def test_a_runbook_imported_under_an_earlier_reading_is_read_again_once(runbook) -> None:
    from caselibrary.models import CaseImportSource
    from caselibrary.runbooks import parse_runbook

    # As an earlier release left it: the Impact section dropped, the plain content hash.
    runbook.write_text(RUNBOOK + "\n## Impact\n\nPayments fail while the target is down.\n")
    CaseImportSource.objects.update(
        content_hash=parse_runbook(runbook.read_text("utf-8"), source="x").content_hash
    )

    first, second = run(runbook.parent), run(runbook.parent)

    assert "0 cases were created, 1 updated" in first
    assert (
        "## Impact\n\nPayments fail while the target is down." in CaseLibrary.objects.get().solution
    )
    assert "0 cases were created, 0 updated, 1 unchanged" in second


def test_a_runbook_the_command_imported_uploaded_in_the_admin_is_the_same_case(
    runbook, admin_client
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    admin_client.post(
        "/admin/caselibrary/caselibrary/import/",
        {"file": SimpleUploadedFile("TargetDown.md", runbook.read_bytes())},
        follow=True,
    )
    changed = RUNBOOK.replace("Roll back the deploy.", "Roll back the release.")
    admin_client.post(
        "/admin/caselibrary/caselibrary/import/",
        {"file": SimpleUploadedFile("TargetDown.md", changed.encode())},
        follow=True,
    )

    case = CaseLibrary.objects.get()
    assert "Roll back the release." in case.solution
    # Still known by its path: the command's next import finds it there.
    assert case.import_source.source_path.endswith("runbooks/TargetDown.md")
    assert "0 cases were created, 1 updated" in run(runbook.parent)
    assert CaseLibrary.objects.count() == 1


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
