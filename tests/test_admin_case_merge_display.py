"""What the merge confirmation and the case page's near-duplicates show of two cases: the
root cause and the solution line by line, as the case's own page shows them (escaped),
and every time in Django's long form, in the console's time zone, in either language."""

from datetime import UTC, datetime

import pytest

from caselibrary.models import CaseReuse
from tests.factories import CaseLibraryFactory
from tests.near_duplicates import flag_near_duplicates

pytestmark = pytest.mark.django_db

CASES = "/admin/caselibrary/caselibrary/"
ROOT_CAUSE = "长事务持有 t_order 行锁不释放。\n其他事务等待超时 <ERROR 1205>。"
SOLUTION = "1. 查 innodb_trx 找到长事务\n2. kill 该线程\n3. 拆分大事务"
# The steps one a line, the text escaped, as the case's own page writes it read-only.
ROOT_CAUSE_SHOWN = "长事务持有 t_order 行锁不释放。<br>其他事务等待超时 &lt;ERROR 1205&gt;。"
SOLUTION_SHOWN = "1. 查 innodb_trx 找到长事务<br>2. kill 该线程<br>3. 拆分大事务"

# 18:19 UTC is 02:19 the next morning in Shanghai.
CREATED = datetime(2026, 12, 6, 18, 19, tzinfo=UTC)
LAST_HIT = datetime(2026, 12, 6, 18, 25, tzinfo=UTC)
LONG_FORMS = {
    "en": ("Dec. 7, 2026, 2:19 a.m.", "Dec. 7, 2026, 2:25 a.m."),
    "zh-hans": ("2026年12月7日 02:19", "2026年12月7日 02:25"),
}
SHORT_FORMS = {"en": ("12/07/2026 2:19 a.m.", "12/07/2026 2:25 a.m.")}


@pytest.fixture
def pair():  # type: ignore[no-untyped-def]
    """An older case and a newer one flagged as saying the same, with steps over lines."""
    older = CaseLibraryFactory(
        title="订单库锁等待超时导致下单失败", root_cause=ROOT_CAUSE, solution=SOLUTION
    )
    newer = CaseLibraryFactory(
        title="订单库锁等待超时，下单失败", root_cause=ROOT_CAUSE, solution=SOLUTION
    )
    flag_near_duplicates(newer, older)
    return older, newer


def test_the_merge_confirmation_keeps_the_lines_of_the_root_cause_and_the_solution(
    admin_client, pair
) -> None:
    older, newer = pair

    page = admin_client.get(f"{CASES}{newer.pk}/merge/{older.pk}/").content.decode()

    assert page.count(ROOT_CAUSE_SHOWN) == 2
    assert page.count(SOLUTION_SHOWN) == 2
    assert "<ERROR 1205>" not in page


def test_the_near_duplicates_beside_a_case_keep_the_lines_of_its_root_cause_and_solution(
    admin_client, pair
) -> None:
    _, newer = pair

    page = admin_client.get(f"{CASES}{newer.pk}/change/").content.decode()
    near_duplicates = page[page.index('<table class="near-duplicates">') :]

    assert near_duplicates.count(ROOT_CAUSE_SHOWN) == 2
    assert near_duplicates.count(SOLUTION_SHOWN) == 2
    assert "<ERROR 1205>" not in page


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_time_on_the_case_page_is_in_the_long_form_in_the_console_time_zone(
    admin_client, pair, settings, language
) -> None:
    settings.LANGUAGE_CODE = language
    settings.TIME_ZONE = "Asia/Shanghai"
    _, newer = pair
    for case in pair:
        type(case).objects.filter(pk=case.pk).update(created_at=CREATED, updated_at=CREATED)
    CaseReuse.objects.create(case=newer, l0_hits=1, last_hit_at=LAST_HIT)
    created, last_hit = LONG_FORMS[language]

    page = admin_client.get(f"{CASES}{newer.pk}/change/").content.decode()
    last_hit_field = page[page.index("field-last_hit_column") :]
    last_hit_field = last_hit_field[: last_hit_field.index("</div>\n")]
    near_duplicates = page[page.index('<table class="near-duplicates">') :]

    assert last_hit in last_hit_field
    # Created at, updated at, and the two cases side by side.
    assert page.count(created) == 4
    assert near_duplicates.count(created) == 2
    for short in SHORT_FORMS.get(language, ()):
        assert short not in page


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_merge_confirmation_writes_each_case_s_time_in_the_long_form(
    admin_client, pair, settings, language
) -> None:
    settings.LANGUAGE_CODE = language
    settings.TIME_ZONE = "Asia/Shanghai"
    older, newer = pair
    for case in pair:
        type(case).objects.filter(pk=case.pk).update(created_at=CREATED)
    created, _ = LONG_FORMS[language]

    page = admin_client.get(f"{CASES}{newer.pk}/merge/{older.pk}/").content.decode()

    assert page.count(created) == 2
    for short in SHORT_FORMS.get(language, ()):
        assert short not in page
