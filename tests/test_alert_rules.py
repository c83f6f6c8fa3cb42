"""The example alert rules and dashboard (config/grafana/): each installation scraped by one
Prometheus alerted on apart, a target that cannot be scraped paged, tasks held too long told
apart from a backlog draining, and summaries a person reads."""

import datetime
import json
import re
from pathlib import Path

import pytest
import yaml
from django.utils import timezone

from tests import test_metrics_queue as queue
from tests.metrics_samples import scrape, value

ROOT = Path(__file__).parent.parent
ALERTS = ROOT / "config/grafana/alerts.yml"
DASHBOARD = ROOT / "config/grafana/diagnosis-dashboard.json"
HELD = "diagnosis_queue_oldest_held_task_enqueued_timestamp_seconds"
AGGREGATION = re.compile(
    r"\b(sum|min|max|avg|count|absent|absent_over_time)\s*(?:by\s*\(([^)]*)\)\s*)?\("
)


def rules() -> dict[str, dict]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"]}


def one_line(text: str) -> str:
    return " ".join(text.split())


def panel(title_start: str) -> dict:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    (found,) = [p for p in panels if p["title"].startswith(title_start)]
    return found


# --- Installations apart ------------------------------------------------------------------


def test_every_rule_aggregates_each_installation_apart() -> None:
    # One Prometheus scraping staging and production: a rule over every target let the
    # one that is up hide the one that is down.
    for name, rule in rules().items():
        aggregations = AGGREGATION.findall(rule["expr"])
        assert aggregations, name
        for function, by in aggregations:
            assert function not in {"absent", "absent_over_time"}, name  # cannot group
            labels = {label.strip() for label in by.split(",")}
            assert {"namespace", "job"} <= labels, (name, function, by)


def test_every_join_between_series_matches_on_the_installation() -> None:
    for name, rule in rules().items():
        expr = one_line(rule["expr"])
        assert "on()" not in expr.replace(" ", ""), name
        for matching in re.findall(r"\bon\s*\(([^)]*)\)", expr):
            assert {"namespace", "job"} <= {m.strip() for m in matching.split(",")}, name


def test_every_summary_names_the_installation() -> None:
    for name, rule in rules().items():
        summary = rule["annotations"]["summary"]
        assert "$labels.namespace" in summary and "$labels.job" in summary, name


def test_a_worker_never_started_is_told_per_installation_only_while_its_database_answers() -> None:
    expr = one_line(rules()["DiagnosisWorkerNeverStarted"]["expr"])

    assert "unless on (namespace, job) count by (namespace, job) " in expr
    assert "(diagnosis_worker_heartbeat_age_seconds)" in expr
    assert "max by (namespace, job) (diagnosis_database_up) == 1" in expr


# --- Summaries ----------------------------------------------------------------------------


def test_no_summary_prints_a_raw_float() -> None:
    # "3.020027184466019 scoring tasks failed": every value goes through a format.
    for name, rule in rules().items():
        summary = rule["annotations"]["summary"]
        for use in re.findall(r"\{\{\s*\$value\s*([^}]*)\}\}", summary):
            assert re.match(r'\|\s*(printf "%\.0f"|humanize\w*)\s*$', use), (name, use)


@pytest.mark.parametrize(
    "alert",
    [
        "DiagnosisEnqueueFailures",
        "DiagnosisScoringFailures",
        "DiagnosisCaseSearchDegraded",
        "DiagnosisScrapeFailing",
    ],
)
def test_a_count_is_told_as_a_whole_number(alert) -> None:
    assert '{{ $value | printf "%.0f" }}' in rules()[alert]["annotations"]["summary"]


# --- A target that cannot be scraped ------------------------------------------------------


def test_a_target_of_the_service_that_cannot_be_scraped_pages_whatever_its_job_is_named() -> None:
    # A database that hangs under traffic holds every sync worker: the scrapes time out,
    # diagnosis_database_up goes stale, and DiagnosisDatabaseDown has no value to fire on.
    rule = rules()["DiagnosisScrapeFailing"]
    expr = one_line(rule["expr"])

    assert "up == 0" in expr
    assert "diagnosis_database_up" in expr  # the service's targets, known by their series
    assert "job=" not in expr.replace(" ", "")
    assert rule["labels"]["severity"] == "page"
    assert rule["for"] in {"2m", "3m", "4m", "5m"}


# --- Tasks held too long ------------------------------------------------------------------


def test_tasks_held_too_long_means_one_task_held_again_and_again_not_many_held_at_once() -> None:
    # The ORM broker locks Q_BULK tasks a fetch: a healthy cluster draining a backlog holds
    # more than its workers run at once.
    rule = rules()["DiagnosisTasksHeldTooLong"]
    text = rule["expr"] + json.dumps(rule["annotations"])

    assert "diagnosis_queue_tasks_in_flight" not in rule["expr"]
    assert HELD in rule["expr"] and "offset" in rule["expr"]
    assert "Q_WORKERS" not in text


def enqueued_at(row_id: int) -> float:
    from django_q.models import OrmQ
    from django_q.signing import SignedPackage

    return SignedPackage.loads(OrmQ.objects.get(pk=row_id).payload)["started"].timestamp()


def acknowledge(row_id: int) -> None:
    """What a cluster's monitor does once the task ran: the broker forgets it."""
    from django_q.models import OrmQ

    OrmQ.objects.filter(pk=row_id).delete()


@pytest.mark.django_db
def test_with_no_task_held_the_oldest_held_task_s_enqueue_time_is_zero(monkeypatch) -> None:
    queue.enqueue_task(monkeypatch)

    assert (HELD, ()) in scrape()
    assert value(scrape(), HELD) == 0


@pytest.mark.django_db
def test_the_oldest_held_task_moves_on_as_a_backlog_drains(monkeypatch) -> None:
    first = queue.enqueue_task(monkeypatch, minutes_ago=20)
    second = queue.enqueue_task(monkeypatch, minutes_ago=20)
    queue.a_worker_takes_the_waiting_tasks()  # both, as Q_BULK takes many
    first_enqueued, second_enqueued = enqueued_at(first), enqueued_at(second)

    held_first = value(scrape(), HELD)
    acknowledge(first)
    held_next = value(scrape(), HELD)

    assert held_first == pytest.approx(first_enqueued, abs=1e-3)
    assert held_next == pytest.approx(second_enqueued, abs=1e-3)
    assert held_next != held_first


@pytest.mark.django_db
def test_a_task_taken_again_after_its_lock_expired_stays_the_oldest_held(monkeypatch) -> None:
    from django_q.models import OrmQ

    stuck = queue.enqueue_task(monkeypatch, minutes_ago=3)
    queue.a_worker_takes_the_waiting_tasks()
    before = value(scrape(), HELD)
    queue.the_worker_dies_and_its_lock_expires(stuck)  # never acknowledged
    queue.enqueue_task(monkeypatch)
    queue.a_worker_takes_the_waiting_tasks()  # taken again, with the newer one

    assert OrmQ.objects.filter(lock__gt=timezone.now()).count() == 2
    assert value(scrape(), HELD) == before == pytest.approx(enqueued_at(stuck), abs=1e-3)


@pytest.mark.django_db
def test_a_held_task_whose_package_cannot_be_read_is_passed_over(monkeypatch) -> None:
    from django_q.brokers import get_broker
    from django_q.models import OrmQ

    OrmQ.objects.create(
        key=get_broker().list_key,
        payload="signed with another SECRET_KEY",
        lock=timezone.now() + datetime.timedelta(seconds=30),
    )
    readable = queue.enqueue_task(monkeypatch, minutes_ago=1)
    queue.a_worker_takes_the_waiting_tasks()

    assert value(scrape(), HELD) == pytest.approx(enqueued_at(readable), abs=1e-3)


# --- The heartbeat behind a backlog -------------------------------------------------------


def test_the_missing_heartbeat_says_it_waits_behind_a_backlog() -> None:
    rule = rules()["DiagnosisWorkerHeartbeatMissing"]
    text = one_line(rule.get("annotations", {}).get("description", ""))

    assert "DiagnosisScoringBacklog" in text
    assert "behind" in text


# --- The dashboard ------------------------------------------------------------------------


def test_the_5xx_share_is_zero_before_the_first_5xx() -> None:
    (target,) = panel("5xx share")["targets"]

    assert "or vector(0)" in target["expr"]


@pytest.mark.parametrize("title", ["Database", "Cache"])
def test_an_up_stat_shows_no_scrape_not_the_last_green_when_scrapes_fail(title) -> None:
    stat = panel(title)
    defaults = stat["fieldConfig"]["defaults"]

    assert stat["options"]["reduceOptions"]["calcs"] == ["last"]
    assert all(t.get("instant") for t in stat["targets"])
    assert defaults["noValue"]
    special = [m for m in defaults["mappings"] if m["type"] == "special"]
    assert special and special[0]["options"]["result"]["color"] == "red"
