"""Every admin list at 1366 pixels, in Chinese and in English: each column in view without
scrolling the table sideways and each select showing its choice whole, with long values."""

from collections.abc import Callable
from datetime import timedelta
from uuid import uuid4

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from django_q.conf import Conf
from django_q.humanhash import humanize
from django_q.models import OrmQ, Schedule, Task
from django_q.signing import SignedPackage
from playwright.sync_api import expect

from diagnosis.models import ToolCatalogEntry
from feedback.models import ReviewState, ReviewTag
from tests import admin_list_widths
from tests.admin_list_widths import QUESTION, SEEDED_CATEGORIES
from tests.factories import (
    BadCaseReviewFactory,
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    FaultCategoryFactory,
)
from tests.test_admin_browser import (  # noqa: F401
    LIST_WIDTHS,
    PASSWORD,
    browser,
    finish,
    log_in,
)

pytestmark = pytest.mark.browser

# Fixtures shared with the other modules, taken by name.
admin_user = admin_list_widths.admin_user


# The names of the list's selects that cut their chosen option short: each is measured
# against a copy of itself sized to that option (field-sizing: content).
CUT_SELECTS = """() => [...document.querySelectorAll('#result_list select')].filter(select => {
  const whole = select.cloneNode(true);
  whole.value = select.value;
  whole.style.cssText = 'field-sizing: content; width: auto; max-width: none; position: absolute';
  document.body.append(whole);
  const cut = whole.getBoundingClientRect().width > select.getBoundingClientRect().width + 0.5;
  whole.remove();
  // A choice cut short on purpose keeps its whole name in the select's tooltip.
  return cut && !select.title.includes(select.selectedOptions[0].text);
}).map(select => select.name)"""


# Session ids as agents send them (up to 64 characters, hyphens or none), questions that
# quote a URL or an exception without a space to break a line at.
SESSION_IDS = (
    "0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13",
    "0b9f3c1e7d2a4c8e9f612a7b5d4e8c14",
    "agent-prod:checkout:2026-05-04T10:15:02Z:0b9f3c1e7d2a4c8e9f61",
)


QUESTIONS = (
    QUESTION * 2,
    "https://grafana.internal.example.com/d/orders-504/checkout?orgId=1&from=now-6h&to=now",
    "java.util.concurrent.RejectedExecutionException:ThreadPoolExecutor@5f2c[Running,pool=200]",
)


def sessions() -> None:
    for session_id, query in zip(SESSION_IDS, QUESTIONS, strict=True):
        DiagnosisSessionFactory(session_id=session_id, query=query, useful=True, evidence_score=20)
    DiagnosisSessionFactory(session_id=f"{SESSION_IDS[1]}-failed", failed=True)
    DiagnosisSessionFactory(session_id=f"{SESSION_IDS[1]}-bad", not_useful=True, evidence_score=65)


def unbacked() -> None:
    sessions()
    CaseLibraryFactory(diagnosis_id=SESSION_IDS[0], title=QUESTION, source_type="AUTO")


def bad_cases() -> None:
    # Every column filled: reviewed, assigned and tagged, confident but wrong, with the
    # long names a team really uses.
    assignee = User.objects.create_user(
        "ops.reviewer.with.a.long.name", password=PASSWORD, is_staff=True
    )
    tags = [ReviewTag.objects.create(name=name) for name in ("needs-runbook", "retrieval-miss")]
    for session_id, query in zip(SESSION_IDS, QUESTIONS, strict=True):
        review = BadCaseReviewFactory(
            session__session_id=session_id,
            session__query=query,
            session__evidence_score=65,
            state=ReviewState.TRIAGED,  # open: the "confident but wrong" mark shows
            reviewed_by="ops.reviewer.with.a.long.name",
            assignee=assignee,
        )
        review.tags.add(*tags)


def tools() -> None:
    for name, kind, rule, pattern in (
        ("QueryIncidentHistoryTools", "retrieval", "hits", r"\b[A-Z]{1,6}-?\d{3,6}\b"),
        ("search_internal_runbooks_and_postmortems", "retrieval", "code", ""),
        ("kubectl_describe_pod", "other", "none", r"\b(?:ORA|MYSQL|PG)-\d{4,5}\b|E[A-Z]{3,8}"),
    ):
        ToolCatalogEntry.objects.create(
            tool_name=name, kind=kind, level_rule=rule, code_pattern=pattern
        )


# What django-q2 keeps of a task that raised: the error, then its traceback.
FAILURE = (
    "timed out : Traceback (most recent call last):\n"
    '  File "/srv/app/.venv/lib/python3.11/site-packages/httpx/_transports/default.py", '
    "line 101, in map_httpcore_exceptions\n"
    "httpx.ConnectTimeout: timed out connecting to https://llm-gateway.internal.example.com/v1"
)


def task(*, success: bool, func: str, group: str | None = None) -> Task:
    stopped = timezone.now()
    task_id = uuid4().hex
    return Task.objects.create(
        id=task_id,
        name=humanize(task_id),
        func=func,
        args=(["0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13"] * 3,),
        kwargs={},
        result=1 if success else FAILURE,
        group=group,
        cluster=Conf.PREFIX,
        started=stopped - timedelta(seconds=1.204),
        stopped=stopped,
        success=success,
        attempt_count=1 if success else 5,
    )


def successful_tasks() -> None:
    task(success=True, func="evaluation.tasks.session_score", group="scoring")
    task(success=True, func="caselibrary.tasks.case_indexer_task", group="case-index")


def failed_tasks() -> None:
    task(success=False, func="evaluation.tasks.session_opinion", group="opinion")
    task(success=False, func="evaluation.tasks.sessions_rescore")


def schedules() -> None:
    last = task(success=True, func="evaluation.tasks.scoring_sweep")
    for name, func, kind in (
        ("worker-heartbeat", "evaluation.tasks.worker_heartbeat", Schedule.MINUTES),
        ("scoring-sweep", "evaluation.tasks.scoring_sweep", Schedule.MINUTES),
        ("session-retention", "feedback.tasks.sessions_purge_task", Schedule.DAILY),
    ):
        Schedule.objects.create(
            name=name,
            func=func,
            schedule_type=kind,
            minutes=1,
            cluster=Conf.PREFIX,
            task=last.id,
        )


def queued_tasks() -> None:
    for func in ("evaluation.tasks.session_score", "caselibrary.tasks.case_indexer_task"):
        task_id = uuid4().hex
        package = {
            "id": task_id,
            "name": humanize(task_id),
            "func": func,
            "args": ("0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13",),
            "kwargs": {},
            "group": "scoring",
            "started": timezone.now(),
        }
        OrmQ.objects.create(
            key=Conf.PREFIX,
            payload=SignedPackage.dumps(package),
            lock=timezone.now() + timedelta(seconds=60),
        )


def cases() -> None:
    for code, name, description in SEEDED_CATEGORIES:
        FaultCategoryFactory(code=code, name=name, description=description)
    DiagnosisSessionFactory(session_id="0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13", useful=True)
    CaseLibraryFactory(
        title=QUESTION * 2,
        diagnosis_id="0b9f3c1e-7d2a-4c8e-9f61-2a7b5d4e8c13",
        source_type="AUTO",
        error_code="java.util.concurrent.RejectedExecutionException",
        fault_category="APPLICATION_ERROR",
        created_by="system",
        updated_by="ops.curator.with.a.long.name",
    )
    CaseLibraryFactory.create_batch(3, fault_category="DEPLOYMENT_CONFIG")


LISTS: dict[str, tuple[str, Callable[[], None]]] = {
    "useful_without_evidence": ("/admin/feedback/usefulwithoutevidence/", unbacked),
    "bad_cases": ("/admin/feedback/badcase/", bad_cases),
    "sessions": ("/admin/diagnosis/diagnosissession/", sessions),
    "tool_catalog": ("/admin/diagnosis/toolcatalogentry/", tools),
    "successful_tasks": ("/admin/django_q/success/", successful_tasks),
    "failed_tasks": ("/admin/django_q/failure/", failed_tasks),
    "scheduled_tasks": ("/admin/django_q/schedule/", schedules),
    "queued_tasks": ("/admin/django_q/ormq/", queued_tasks),
    "cases": ("/admin/caselibrary/caselibrary/", cases),
}


@pytest.mark.parametrize("english", [False, True], ids=["chinese", "english"])
@pytest.mark.parametrize("name", list(LISTS))
def test_every_column_of_the_list_is_in_view_at_1366_pixels_with_each_choice_whole(
    browser,  # noqa: F811
    live_server,
    admin_user,
    settings,
    name,
    english,
) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    url, fill = LISTS[name]
    fill()
    page = log_in(browser, live_server, admin_user, width=1366, english=english)

    page.goto(page.base_url + url)
    expect(page.locator("#result_list tbody tr").first).to_be_visible()
    widths = page.evaluate(LIST_WIDTHS)
    cut = page.evaluate(CUT_SELECTS)
    finish(page, f"{name}_at_1366_{'english' if english else 'chinese'}")
    assert widths["page"] <= widths["window"] == 1366, widths
    assert widths["list"] <= widths["box"], widths
    assert cut == [], cut
