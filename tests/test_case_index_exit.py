"""case_index fails (exit 1) when a change is stuck, so cron and CI can alert; the
oldest waiting change is dated in UTC."""

import io
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from caselibrary.models import CaseChange
from tests.factories import CaseLibraryFactory
from tests.test_index_bounds import engine_refusing  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_change_waiting_for_over_five_minutes_fails_the_command_naming_it() -> None:
    case = CaseLibraryFactory(title="DNS 解析超时")
    CaseChange.objects.update(changed_at=timezone.now() - timedelta(minutes=10))
    out = io.StringIO()

    with pytest.raises(CommandError, match=rf"^Waiting for over 5 minutes: {case.case_id} "):
        call_command("case_index", stdout=out)

    assert re.search(
        r"Changes are waiting \(the oldest at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)\.",
        out.getvalue(),
    )


def test_a_fresh_change_waiting_does_not_fail_the_command() -> None:
    CaseLibraryFactory(title="DNS 解析超时")
    out = io.StringIO()

    call_command("case_index", stdout=out)

    assert "Changes are waiting" in out.getvalue()


def test_a_build_that_leaves_a_case_not_indexed_fails_naming_it(
    engine_refusing,  # noqa: F811
) -> None:
    bad = CaseLibraryFactory(title="磁盘写满", root_cause="无法嵌入的根因", solution="清理日志")
    CaseLibraryFactory(title="DNS 解析超时", solution="换用本地缓存")
    out = io.StringIO()

    with pytest.raises(CommandError, match=rf"^Not indexed: {bad.case_id} \(changed "):
        call_command("case_index", "--build", stdout=out)

    assert "Indexed 1 changed case(s)." in out.getvalue()
