"""The task queue's pages (django-q2's own admin) in the console's Chinese, and their
function column, which wraps after the dots of a task's path."""

import re
from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.utils import timezone
from django.utils.translation import override
from django_q.conf import Conf
from django_q.models import Failure, OrmQ, Schedule, Success, Task
from django_q.signing import SignedPackage

pytestmark = pytest.mark.django_db

LISTS = {
    Success: "/admin/django_q/success/",
    Failure: "/admin/django_q/failure/",
    Schedule: "/admin/django_q/schedule/",
    OrmQ: "/admin/django_q/ormq/",
}
# Said the same way in Chinese.
SAME_IN_CHINESE = {"ID", "Cron"}
CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def chinese_by_default(settings) -> None:  # type: ignore[no-untyped-def]
    settings.LANGUAGE_CODE = "zh-hans"


def a_task(*, success: bool, func: str = "evaluation.tasks.session_score") -> Task:
    task_id = uuid4().hex
    stopped = timezone.now()
    return Task.objects.create(
        id=task_id,
        name=f"task-{task_id[:8]}",
        func=func,
        args=("0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13",),
        result=1 if success else "timed out : Traceback (most recent call last): ...",
        group="scoring",
        cluster=Conf.PREFIX,
        started=stopped - timedelta(seconds=1),
        stopped=stopped,
        success=success,
    )


@pytest.fixture
def one_of_each() -> None:
    a_task(success=True)
    a_task(success=False)
    Schedule.objects.create(name="worker-heartbeat", func="evaluation.tasks.worker_heartbeat")
    OrmQ.objects.create(
        key=Conf.PREFIX,
        payload=SignedPackage.dumps(
            {"id": uuid4().hex, "name": "queued", "func": "evaluation.tasks.session_score"}
        ),
        lock=timezone.now(),
    )


def texts_of(model: type) -> list:
    """What the task queue's pages show of a model: its names, its fields' labels and
    help texts, its list's columns and actions."""
    model_admin = admin.site.get_model_admin(model)
    list_display = model_admin.get_list_display(RequestFactory().get(LISTS[model]))
    texts = [model._meta.verbose_name, model._meta.verbose_name_plural]
    for field in model._meta.fields:
        texts += [field.verbose_name, field.help_text]
    for name in list_display:
        column = getattr(model_admin, name, None) or getattr(model, name, None)
        texts.append(getattr(column, "short_description", None))
    for action in model_admin.actions or ():
        texts.append(getattr(action, "short_description", None))
    return [text for text in texts if text]


@pytest.mark.parametrize("model", LISTS, ids=lambda model: model._meta.model_name)
def test_every_label_and_help_text_of_the_task_queue_is_in_chinese(model) -> None:
    with override("zh-hans"):
        shown = {str(text) for text in texts_of(model)}

    untranslated = {text for text in shown if not CHINESE.search(text)} - SAME_IN_CHINESE
    assert untranslated == set()


def column_headers(page: str) -> list[str]:
    """The list's column headers (not the navigation's)."""
    table = re.search(r'<table id="result_list">.*?</thead>', page, flags=re.S)
    assert table, "no list on the page"
    headers = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', table.group(), flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", header).split()) for header in headers]


@pytest.mark.parametrize("model", LISTS, ids=lambda model: model._meta.model_name)
def test_the_task_queue_lists_head_their_columns_in_chinese(
    admin_client, one_of_each, model
) -> None:
    page = admin_client.get(LISTS[model]).content.decode()

    headers = [header for header in column_headers(page) if header]
    assert headers
    assert [h for h in headers if not CHINESE.search(h) and h not in SAME_IN_CHINESE] == []
    assert "函数" in headers


def test_a_failed_task_is_shown_with_chinese_labels_and_explanations(admin_client) -> None:
    task = a_task(success=False)

    page = admin_client.get(f"/admin/django_q/failure/{task.pk}/change/").content.decode()

    assert "开始时间" in page and "工作进程开始执行任务的时间。" in page
    assert "尝试次数" in page and "Attempt count" not in page
    assert "Started at" not in page and "When the worker" not in page


def test_the_function_of_a_task_wraps_after_its_dots_and_still_sorts_the_list(
    admin_client,
) -> None:
    a_task(success=True, func="evaluation.tasks.session_score")
    a_task(success=True, func="caselibrary.tasks.case_indexer_task")

    page = admin_client.get(LISTS[Success]).content.decode()
    # The function is the list's third column (name, group, function, ...).
    by_function = admin_client.get(LISTS[Success], {"o": "3"}).content.decode()

    assert "evaluation.<wbr>tasks.<wbr>session_score" in page
    assert by_function.index("caselibrary.<wbr>") < by_function.index("evaluation.<wbr>")


def test_a_queued_task_shows_the_function_read_from_its_payload(admin_client, one_of_each) -> None:
    page = admin_client.get(LISTS[OrmQ]).content.decode()

    assert "evaluation.<wbr>tasks.<wbr>session_score" in page


@pytest.mark.parametrize(
    ("model", "field"),
    [(Success, "started"), (Success, "stopped"), (Failure, "stopped"), (Schedule, "next_run")],
    ids=lambda value: value if isinstance(value, str) else value._meta.model_name,
)
def test_the_task_queue_lists_write_their_times_as_every_other_list_does(
    admin_client, one_of_each, settings, model, field
) -> None:
    settings.TIME_ZONE = "Asia/Shanghai"
    when = datetime(2026, 9, 30, 14, 59, tzinfo=UTC)
    model.objects.update(**{field: when})

    page = admin_client.get(LISTS[model]).content.decode()

    # 14:59 UTC is 22:59 in Shanghai: the day above the time, the long form in the tooltip.
    assert re.search(
        r'<time class="list-time" datetime="2026-09-30T22:59:00\+08:00"'
        r' title="2026年9月30日 22:59"><span>2026-09-30</span> <span>22:59</span></time>',
        page,
    )
    # and the list still sorts by it.
    assert re.search(rf'<th scope="col" class="sortable column-{field}_column', page)
