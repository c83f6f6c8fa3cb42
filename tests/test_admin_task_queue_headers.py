"""The task queue's lists head every column with a name, in English as in Chinese: none
shows a field's raw name (django-q2 calls its last-run column "last_run")."""

import re

import pytest
from django.utils import timezone
from django_q.models import Schedule

from tests.test_admin_task_queue import LISTS, a_task, column_headers, one_of_each  # noqa: F401

pytestmark = pytest.mark.django_db

SCHEDULES = "/admin/django_q/schedule/"
# A raw field name: words joined by underscores ("last_run", "Task_id").
RAW_NAME = re.compile(r"\w_\w")


@pytest.fixture(autouse=True)
def chinese_by_default(settings) -> None:  # type: ignore[no-untyped-def]
    settings.LANGUAGE_CODE = "zh-hans"


@pytest.fixture
def a_schedule_that_ran() -> None:
    ran = a_task(success=True, func="evaluation.tasks.scoring_sweep")
    Schedule.objects.create(
        name="scoring-sweep",
        func="evaluation.tasks.scoring_sweep",
        next_run=timezone.now(),
        task=ran.id,
    )


def in_english(client) -> None:  # type: ignore[no-untyped-def]
    assert client.post("/i18n/setlang/", {"language": "en", "next": "/admin/"}).status_code == 302


@pytest.mark.parametrize("url", LISTS.values(), ids=lambda url: url.split("/")[-2])
def test_no_task_queue_list_heads_a_column_with_a_raw_field_name_in_english(
    admin_client,
    one_of_each,  # noqa: F811
    url,
) -> None:
    in_english(admin_client)

    headers = column_headers(admin_client.get(url).content.decode())

    assert [header for header in headers if RAW_NAME.search(header)] == []


def test_the_schedule_list_heads_its_last_run_column_in_words_in_english(
    admin_client, a_schedule_that_ran
) -> None:
    in_english(admin_client)

    headers = column_headers(admin_client.get(SCHEDULES).content.decode())

    assert "Last run" in headers


def test_the_schedule_list_heads_its_last_run_column_in_chinese(
    admin_client, a_schedule_that_ran
) -> None:
    headers = column_headers(admin_client.get(SCHEDULES).content.decode())

    assert "最近运行" in headers
    assert "Last run" not in headers
