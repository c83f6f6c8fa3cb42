"""A case the admin's import page creates or changes has its admin history, as a case
saved on its page does: who imported it, from which file."""

import json
import uuid

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from caselibrary.models import CaseLibrary
from tests.admin_pages import member_of
from tests.factories import CaseLibraryFactory, FaultCategoryFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

IMPORT = "/admin/caselibrary/caselibrary/import/"
CASES = "/admin/caselibrary/caselibrary/"
KEPT, MERGED, ORPHAN, MISSING = (str(uuid.UUID(int=n)) for n in range(1, 5))


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


@pytest.fixture
def curator() -> Client:
    return member_of("curator")


def jsonl(*rows: dict) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def row(title: str, **fields: str) -> dict:
    return {"title": title, "rootCause": f"{title} 的根因", "solution": f"{title} 的处理", **fields}


def import_file(client: Client, content: bytes, name: str = "cases.jsonl", **extra: str):  # type: ignore[no-untyped-def]
    upload = SimpleUploadedFile(name, content)
    return client.post(IMPORT, {"file": upload, **extra}, follow=True)


def history(case: CaseLibrary) -> list[tuple[int, str, str]]:
    return [
        (entry.action_flag, entry.user.get_username(), entry.get_change_message())
        for entry in LogEntry.objects.filter(object_id=case.pk).order_by("pk")
    ]


def test_each_case_an_import_creates_has_an_addition_in_its_history(curator) -> None:
    response = import_file(curator, jsonl(row("DNS 解析超时"), row("磁盘写满")))

    assert "2 cases created" in text(response)
    cases = list(CaseLibrary.objects.all())
    assert len(cases) == 2
    for case in cases:
        assert history(case) == [(ADDITION, "ops.curator", "Added by importing cases.jsonl.")]
        page = text(curator.get(f"{CASES}{case.pk}/history/"))
        assert "doesn’t have a change history" not in page
        assert "Added by importing cases.jsonl." in page and "ops.curator" in page


def test_a_case_an_import_changes_has_a_change_and_an_unchanged_one_nothing(curator) -> None:
    changed = CaseLibraryFactory(title="旧标题")
    same = CaseLibraryFactory(title="没变", root_cause="根因", solution="处理")
    content = jsonl(
        row("新标题", caseId=changed.pk),
        {"caseId": same.pk, "title": "没变", "rootCause": "根因", "solution": "处理"},
    )

    response = import_file(curator, content, name="fixes.jsonl")

    assert "0 cases created, 1 updated, 1 unchanged." in text(response)
    assert history(changed) == [(CHANGE, "ops.curator", "Changed by importing fixes.jsonl.")]
    assert history(same) == []


def test_a_dry_run_logs_nothing(curator) -> None:
    changed = CaseLibraryFactory(title="旧标题")

    response = import_file(
        curator, jsonl(row("新的"), row("新标题", caseId=changed.pk)), dry_run="on"
    )

    assert "Dry run: 1 case would be created, 1 updated" in text(response)
    assert not LogEntry.objects.exists()


def test_a_file_with_a_bad_row_logs_nothing(curator) -> None:
    response = import_file(curator, jsonl(row("好的"), {"title": "缺了根因"}))

    assert response.status_code == 400
    assert not CaseLibrary.objects.exists()
    assert not LogEntry.objects.exists()


def merge_entries(case: CaseLibrary) -> list[tuple[int, str, str]]:
    return [entry for entry in history(case) if entry[2].startswith("Merged")]


def test_a_merge_an_import_records_is_in_the_history_of_both_cases(curator) -> None:
    response = import_file(
        curator,
        jsonl(
            row("订单库锁等待", caseId=MERGED, mergedInto=KEPT), row("订单库锁超时", caseId=KEPT)
        ),
    )

    assert "2 cases created, 0 updated, 0 unchanged, 1 merged." in text(response)
    kept, merged = CaseLibrary.objects.get(pk=KEPT), CaseLibrary.objects.get(pk=MERGED)
    assert history(kept) == [
        (ADDITION, "ops.curator", "Added by importing cases.jsonl."),
        (
            CHANGE,
            "ops.curator",
            f"Merged “\u2068订单库锁等待\u2069” ({MERGED}) into this case"
            " by importing cases.jsonl.",
        ),
    ]
    assert history(merged) == [
        (ADDITION, "ops.curator", "Added by importing cases.jsonl."),
        (
            CHANGE,
            "ops.curator",
            f"Merged into “\u2068订单库锁超时\u2069” ({KEPT}) by importing cases.jsonl.",
        ),
    ]
    page = text(curator.get(f"{CASES}{merged.pk}/history/"))
    assert f"Merged into “\u2068订单库锁超时\u2069” ({KEPT}) by importing cases.jsonl." in page


def test_a_merge_of_two_unchanged_cases_is_the_only_entry_the_import_logs(curator) -> None:
    kept = CaseLibraryFactory(title="原件", root_cause="根因", solution="处理")
    merged = CaseLibraryFactory(title="副本", root_cause="根因", solution="处理")
    content = jsonl(
        {
            "caseId": merged.pk,
            "title": "副本",
            "rootCause": "根因",
            "solution": "处理",
            "mergedInto": kept.pk,
        },
        {"caseId": kept.pk, "title": "原件", "rootCause": "根因", "solution": "处理"},
    )

    response = import_file(curator, content, name="merges.jsonl")

    assert "0 cases created, 0 updated, 2 unchanged, 1 merged." in text(response)
    assert history(kept) == [
        (
            CHANGE,
            "ops.curator",
            f"Merged “\u2068副本\u2069” ({merged.pk}) into this case by importing merges.jsonl.",
        )
    ]
    assert history(merged) == [
        (
            CHANGE,
            "ops.curator",
            f"Merged into “\u2068原件\u2069” ({kept.pk}) by importing merges.jsonl.",
        )
    ]


def test_a_merge_already_recorded_or_not_recorded_logs_no_merge(curator) -> None:
    content = jsonl(
        row("副本", caseId=MERGED, mergedInto=KEPT),
        row("原件", caseId=KEPT),
        row("孤儿", caseId=ORPHAN, mergedInto=MISSING),
    )
    import_file(curator, content)

    response = import_file(curator, content)

    assert "0 cases created, 0 updated, 3 unchanged." in text(response)
    assert len(merge_entries(CaseLibrary.objects.get(pk=KEPT))) == 1
    assert len(merge_entries(CaseLibrary.objects.get(pk=MERGED))) == 1
    assert merge_entries(CaseLibrary.objects.get(pk=ORPHAN)) == []


def test_a_dry_run_with_a_merge_logs_nothing(curator) -> None:
    response = import_file(
        curator,
        jsonl(row("副本", caseId=MERGED, mergedInto=KEPT), row("原件", caseId=KEPT)),
        dry_run="on",
    )

    assert "1 would be merged" in text(response)
    assert not LogEntry.objects.exists()
