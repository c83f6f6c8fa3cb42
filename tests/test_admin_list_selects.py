"""The selects of the lists an operator edits in place name each choice briefly (a case's
category by its name, its code in a tooltip); the filter beside the list keeps the long
names."""

import html
import re

import pytest

from caselibrary.models import FaultCategory
from diagnosis.models import ToolCatalogEntry
from tests.admin_pages import list_edit_post
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db

TOOLS = "/admin/diagnosis/toolcatalogentry/"
CASES = "/admin/caselibrary/caselibrary/"


@pytest.fixture(autouse=True)
def chinese_by_default(settings) -> None:  # type: ignore[no-untyped-def]
    settings.LANGUAGE_CODE = "zh-hans"


def options(page: str, name: str) -> list[str]:
    """The labels a select of the list offers."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', page, flags=re.S)
    assert select, f"no select {name}"
    return [html.unescape(label) for label in re.findall(r">([^<]*)</option>", select.group(1))]


def test_the_tool_catalog_list_offers_each_level_rule_in_a_few_words(admin_client) -> None:
    ToolCatalogEntry.objects.create(tool_name="QueryIncidentHistoryTools", kind="retrieval")

    page = admin_client.get(TOOLS).content.decode()

    assert options(page, "form-0-level_rule") == [
        "文档数 > 0 → L1，否则 NONE",
        "错误码 → L0，文档数 > 0 → L1，否则 NONE",
        "始终 NONE",
    ]
    # The filter beside it says each rule in full.
    assert "结果中有精确的错误码 → L0，否则文档数 &gt; 0 → L1，否则 NONE" in page


def test_a_level_rule_chosen_in_the_tool_catalog_list_is_saved(admin_client) -> None:
    tool = ToolCatalogEntry.objects.create(tool_name="QueryIncidentHistoryTools")
    data = list_edit_post([{"id": tool.pk, "kind": "retrieval", "level_rule": "code"}])

    assert admin_client.post(TOOLS, data).status_code == 302
    tool.refresh_from_db()
    assert (tool.kind, tool.level_rule) == ("retrieval", "code")


def test_the_case_list_names_each_category_by_its_name_and_keeps_an_unknown_code(
    admin_client,
) -> None:
    FaultCategory.objects.update_or_create(
        code="DEPLOYMENT_CONFIG", defaults={"name": "发布与配置 / Deployment & config"}
    )
    CaseLibraryFactory(fault_category="DEPLOYMENT_CONFIG")
    CaseLibraryFactory(fault_category="OLD_CODE")  # from before the taxonomy

    page = admin_client.get(CASES).content.decode()

    names = list(FaultCategory.objects.values_list("name", flat=True))
    assert "发布与配置 / Deployment & config" in names
    assert options(page, "form-0-fault_category") == [*names, "OLD_CODE"]
    assert options(page, "form-1-fault_category") == names
    # The filter beside the list gives each code its name.
    assert (
        '<a href="?fault_category=DEPLOYMENT_CONFIG">'
        "DEPLOYMENT_CONFIG · 发布与配置 / Deployment &amp; config</a>"
    ) in page
