"""What a screen reader says on the console's Chinese lists: the texts the page hides from
sight (sorting links, checkbox labels, the navigation's column headings, the search
icon, yes/no icons, the title of a list sent back with errors) are Chinese too."""

import re

import pytest
from django_q.models import Schedule

from diagnosis.models import ToolCatalogEntry
from tests.admin_pages import list_edit_post
from tests.factories import DiagnosisSessionFactory
from tests.page_text import text
from tests.test_admin_task_queue import a_task

pytestmark = pytest.mark.django_db

SESSIONS = "/admin/diagnosis/diagnosissession/"
TOOLS = "/admin/diagnosis/toolcatalogentry/"
SCHEDULES = "/admin/django_q/schedule/"


@pytest.fixture(autouse=True)
def chinese_by_default(settings) -> None:  # type: ignore[no-untyped-def]
    settings.LANGUAGE_CODE = "zh-hans"


def test_the_sorting_links_and_checkbox_labels_of_a_list_are_said_in_chinese(
    admin_client,
) -> None:
    DiagnosisSessionFactory(session_id="bad-504", not_useful=True)

    # Sorted by two columns: each sorted header offers all three links.
    page = text(admin_client.get(SESSIONS, {"o": "3.-6"}))

    assert 'title="删除排序"' in page and 'title="正逆序切换"' in page
    assert 'title="排序优先级: 1"' in page
    assert 'aria-label="选择此页面上的所有对象执行操作"' in page
    assert 'aria-label="选择此对象执行操作 - bad-504"' in page
    for english in ("Remove from sorting", "Toggle sorting", "Sorting priority", "for an action"):
        assert english not in page


def test_the_navigation_beside_a_list_heads_its_hidden_columns_in_chinese(admin_client) -> None:
    page = text(admin_client.get(SESSIONS))

    assert '<thead class="visually-hidden"> <tr> <th scope="col">模型名称</th>' in page
    assert '<th scope="col">增加链接</th> <th scope="col">修改或查看列表链接</th>' in page
    for english in ("Model name", "Add link", "Change or view list link"):
        assert english not in page


def test_the_search_icon_of_a_list_is_said_in_chinese(admin_client) -> None:
    page = text(admin_client.get(SESSIONS))

    assert re.search(r'<img src="[^"]+/search\.svg" alt="搜索">', page)
    assert 'alt="Search"' not in page


def test_the_yes_no_icons_of_the_schedule_list_are_said_in_chinese(admin_client) -> None:
    ran = a_task(success=True, func="evaluation.tasks.scoring_sweep")
    Schedule.objects.create(name="scoring-sweep", func=ran.func, task=ran.id)
    failed = a_task(success=False, func="evaluation.tasks.session_opinion")
    Schedule.objects.create(name="opinion-sweep", func=failed.func, task=failed.id)
    Schedule.objects.create(name="never-ran", func="evaluation.tasks.worker_heartbeat")

    page = text(admin_client.get(SCHEDULES))

    assert re.search(r'<img src="[^"]+/icon-yes\.svg" alt="是">', page)
    assert re.search(r'<img src="[^"]+/icon-no\.svg" alt="否">', page)
    assert re.search(r'<img src="[^"]+/icon-unknown\.svg" alt="未知">', page)
    for english in ('alt="True"', 'alt="False"', 'alt="None"'):
        assert english not in page


def test_a_list_sent_back_with_errors_says_so_in_chinese_in_its_title(admin_client) -> None:
    tool = ToolCatalogEntry.objects.create(tool_name="QueryIncidentHistoryTools")
    data = list_edit_post([{"id": tool.pk, "kind": "retrieval", "level_rule": "no-such-rule"}])

    page = text(admin_client.post(TOOLS, data))

    assert re.search(r"<title>错误： ", page)
    assert "Error:" not in page
