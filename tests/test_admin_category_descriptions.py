"""The built-in fault categories are described in the operator's language; a description
an operator wrote, or changed, is shown as written, and nothing stored is rewritten."""

from importlib import import_module

import pytest

from caselibrary.admin.categories import BUILT_IN_DESCRIPTIONS
from caselibrary.models import FaultCategory
from tests.admin_pages import member_of
from tests.factories import FaultCategoryFactory
from tests.page_text import text

pytestmark = pytest.mark.django_db

CATEGORIES = "/admin/caselibrary/faultcategory/"
SEEDED = import_module("caselibrary.migrations.0003_seed_fault_categories").CATEGORIES


@pytest.fixture(autouse=True)
def console_in_chinese(settings) -> None:  # type: ignore[no-untyped-def]
    settings.LANGUAGE_CODE = "zh-hans"


def test_the_built_in_descriptions_are_the_ones_the_migration_stored() -> None:
    assert {code: description for code, _name, description in SEEDED} == BUILT_IN_DESCRIPTIONS


def test_the_chinese_list_describes_the_built_in_categories_in_chinese() -> None:
    page = text(member_of("viewer").get(CATEGORIES))

    assert "慢查询、主从延迟、锁、连接池。" in page
    assert "尚未整理：所有自动生成的案例都从这里开始。" in page
    assert "Slow queries, replication lag, locks, connection pools." not in page


def test_the_english_list_describes_them_as_stored(settings) -> None:
    settings.LANGUAGE_CODE = "en"

    page = text(member_of("viewer").get(CATEGORIES))

    assert "Slow queries, replication lag, locks, connection pools." in page


def test_a_description_an_operator_wrote_is_shown_as_written() -> None:
    FaultCategoryFactory(code="STORAGE", description="Ceph and NFS volumes.")
    FaultCategory.objects.filter(code="NETWORK").update(description="交换机、专线。")

    page = text(member_of("viewer").get(CATEGORIES))

    assert "Ceph and NFS volumes." in page
    assert "交换机、专线。" in page


def test_a_viewer_reads_a_built_in_description_in_chinese_on_its_page() -> None:
    page = text(member_of("viewer").get(f"{CATEGORIES}DATABASE/change/"))

    assert "慢查询、主从延迟、锁、连接池。" in page


def test_a_curator_edits_the_stored_text_and_saving_it_unchanged_keeps_it() -> None:
    curator = member_of("curator")
    stored = FaultCategory.objects.get(code="DATABASE")

    form = text(curator.get(f"{CATEGORIES}DATABASE/change/"))
    curator.post(
        f"{CATEGORIES}DATABASE/change/",
        {"name": stored.name, "description": stored.description, "keywords": stored.keywords},
    )

    assert "Slow queries, replication lag, locks, connection pools.</textarea>" in form
    assert FaultCategory.objects.get(code="DATABASE").description == stored.description
