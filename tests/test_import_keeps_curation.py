"""Importing runbooks again (a scheduled sync of the team's runbook repository) keeps what
curators did to their cases: an unchanged file leaves its case alone, and a changed one
writes what the file says (its title and texts, its codes) and keeps the category a
curator gave, which a runbook does not say."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from caselibrary.models import CaseLibrary, FaultCategory
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
