"""GET /metrics: the Prometheus text format, counters that follow what happened, the queue,
and the dashboard and alerts reading only what it exports."""

import json

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests import metrics_samples
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory
from tests.metrics_samples import scrape, value
from tests.processes import ROOT

pytestmark = pytest.mark.django_db

# Fixtures shared with the other modules, taken by name.
fresh_broker_log = metrics_samples.fresh_broker_log


def test_the_scrape_is_prometheus_text_with_every_family(client) -> None:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    names = {family.name for family in text_string_to_metric_families(response.content.decode())}

    assert {
        "diagnosis_http_requests",
        "diagnosis_http_request_duration_seconds",
        "diagnosis_sessions_completed",
        "diagnosis_evidence_score",
        "diagnosis_scoring_failures",
        "diagnosis_feedback",
        "diagnosis_cases_created",
        "diagnosis_case_searches",
        "diagnosis_database_up",
        "diagnosis_cache_up",
        "diagnosis_queue_up",
        "diagnosis_queue_waiting_tasks",
        "diagnosis_queue_oldest_task_age_seconds",
        "diagnosis_enqueue_failures",
    } <= names


def test_counters_follow_sessions_scores_feedback_cases_and_searches(
    api, django_capture_on_commit_callbacks
) -> None:
    CaseLibraryFactory(error_code="ERROR 1205", title="MySQL lock wait timeout")
    before = scrape()

    with django_capture_on_commit_callbacks(execute=True):
        api.post("/api/sessions", {"sessionId": "m-1", "query": "ERROR 1205?"}, format="json")
        api.post("/api/cases/search", {"query": "ERROR 1205", "sessionId": "m-1"}, format="json")
        api.post(
            "/api/sessions/m-1/complete",
            {"status": "SUCCESS", "answer": "根因：长事务。"},
            format="json",
        )
        api.post("/api/feedback", {"sessionId": "m-1", "feedback": "useful"}, format="json")
        api.post("/api/feedback", {"sessionId": "m-1", "feedback": "useful"}, format="json")

    after = scrape()

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("diagnosis_sessions_completed_total", status="SUCCESS") == 1
    assert delta("diagnosis_evidence_score_count") == 1  # scored inline (Q_SYNC)
    assert delta("diagnosis_evidence_score_bucket", le="64.0") == 0  # it scored 65
    assert delta("diagnosis_evidence_score_bucket", le="65.0") == 1
    assert delta("diagnosis_feedback_total", value="useful") == 1  # the repeat changed nothing
    assert delta("diagnosis_cases_created_total", source="AUTO") == 1
    assert delta("diagnosis_case_searches_total", level="L0") == 1
    route = "case-search"
    assert delta("diagnosis_http_requests_total", route=route, method="POST", status="200") == 1
    assert delta("diagnosis_http_request_duration_seconds_count", route=route, method="POST") == 1
    assert (
        delta("diagnosis_http_requests_total", route="feedback-list", method="POST", status="200")
        == 2
    )


def test_routes_are_named_never_raw_paths(api) -> None:
    DiagnosisSessionFactory(session_id="abc-123")
    api.get("/api/sessions/abc-123")
    api.get("/api/sessions/does-not-exist")
    api.get("/no/such/page")

    routes = {dict(labels).get("route") for name, labels in scrape() if "http_requests" in name}

    assert "session-detail" in routes
    assert "unmatched" in routes
    assert not any(route and "abc-123" in route for route in routes)


def test_an_api_path_no_endpoint_serves_is_counted_as_unmatched(api) -> None:
    labels = {"route": "unmatched", "method": "POST", "status": "404"}
    before = value(scrape(), "diagnosis_http_requests_total", **labels)

    api.post("/api/feedback/", {"sessionId": "x", "feedback": "useful"}, format="json")

    after = scrape()
    assert value(after, "diagnosis_http_requests_total", **labels) == before + 1
    routes = {dict(tags).get("route") for name, tags in after if "http_requests" in name}
    assert not any(route and "api_not_found" in route for route in routes)


def test_a_request_answered_before_routing_counts_under_the_route_it_asked_for(
    api, settings
) -> None:
    # The HTTPS redirect (its 403 on the API) and the body limit answer before the URL is
    # resolved.
    settings.SECURE_SSL_REDIRECT = True
    refused = {"route": "session-list", "method": "POST", "status": "403"}
    redirected = {"route": "admin:login", "method": "GET", "status": "301"}
    before = [
        value(scrape(), "diagnosis_http_requests_total", **labels)
        for labels in (refused, redirected)
    ]

    assert api.post("/api/sessions", {"query": "q"}, format="json").status_code == 403
    assert api.get("/admin/login/").status_code == 301

    after = scrape()
    assert value(after, "diagnosis_http_requests_total", **refused) == before[0] + 1
    assert value(after, "diagnosis_http_requests_total", **redirected) == before[1] + 1
    for status in ("301", "403"):
        assert not value(after, "diagnosis_http_requests_total", route="unmatched", status=status)


def test_a_method_http_does_not_define_counts_as_other_so_clients_cannot_add_series(
    client,
) -> None:
    labels = {"route": "session-list", "method": "other", "status": "401"}
    before = value(scrape(), "diagnosis_http_requests_total", **labels)

    for n in range(3):
        client.generic(f"M{n:04d}", "/api/sessions")

    after = scrape()
    assert value(after, "diagnosis_http_requests_total", **labels) == before + 3
    methods = {dict(tags).get("method") for name, tags in after if "http_requests" in name}
    assert not {m for m in methods if m and m.startswith("M0")}


def test_the_queue_depth_and_oldest_age_come_from_the_broker(monkeypatch) -> None:
    from django_q.tasks import async_task

    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    async_task("evaluation.tasks.worker_heartbeat")
    async_task("evaluation.tasks.worker_heartbeat")

    samples = scrape()

    assert value(samples, "diagnosis_queue_waiting_tasks") == 2
    assert value(samples, "diagnosis_queue_oldest_task_age_seconds") >= 0


def test_an_unreachable_broker_leaves_the_scrape_whole_and_says_the_queue_is_down(
    monkeypatch, settings, caplog
) -> None:
    # The Redis broker at an address where nothing listens, as Q_REDIS_URL sets it (django-q2
    # reads its settings once, into Conf).
    url = "redis://127.0.0.1:1/7"
    settings.Q_CLUSTER = {k: v for k, v in settings.Q_CLUSTER.items() if k != "orm"} | {
        "redis": url
    }
    monkeypatch.setattr("django_q.conf.Conf.ORM", None)
    monkeypatch.setattr("django_q.conf.Conf.REDIS", url)

    samples = scrape()

    assert value(samples, "diagnosis_queue_up") == 0
    names = {name for name, _labels in samples}
    assert "diagnosis_queue_waiting_tasks" not in names  # unknown, not "empty"
    assert "diagnosis_queue_oldest_task_age_seconds" not in names
    assert {"diagnosis_http_requests_total", "diagnosis_enqueue_failures_total"} <= names
    assert "the task queue's broker could not be read: ConnectionError" in caplog.text


def test_a_readable_broker_says_the_queue_is_up() -> None:
    samples = scrape()

    assert value(samples, "diagnosis_queue_up") == 1
    assert ("diagnosis_queue_waiting_tasks", ()) in samples


def test_the_dashboard_and_the_alerts_only_use_metrics_the_service_exports(client) -> None:
    import re

    import yaml
    from django.utils import timezone

    from config import metrics
    from evaluation.models import WorkerHeartbeat

    # Labelled series appear once something happened: make each happen once.
    WorkerHeartbeat.objects.create(host="worker-a", beat_at=timezone.now())
    metrics.session_completed("SUCCESS")
    metrics.feedback_recorded("useful")
    metrics.case_created("AUTO")
    metrics.case_search("L1")
    metrics.request_observed(route="feedback-list", method="POST", status=200, seconds=0.01)
    exported = {
        sample.name
        for family in text_string_to_metric_families(
            client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
        )
        for sample in family.samples
    } | {"diagnosis_http_request_duration_seconds_bucket", "diagnosis_evidence_score_bucket"}
    dashboard = json.loads((ROOT / "config/grafana/diagnosis-dashboard.json").read_text())
    alerts = yaml.safe_load((ROOT / "config/grafana/alerts.yml").read_text())
    expressions = [t["expr"] for p in dashboard["panels"] for t in p["targets"]] + [
        rule["expr"] for group in alerts["groups"] for rule in group["rules"]
    ]

    used = {name for expr in expressions for name in re.findall(r"diagnosis_[a-z_]+", expr)}
    assert used and used <= exported, used - exported
    assert all(
        rule["alert"] and rule["annotations"]["summary"] for rule in alerts["groups"][0]["rules"]
    )


def test_the_scrape_has_no_created_series_with_or_without_a_shared_directory(client) -> None:
    # The multi-process scrape has none; one process's had a *_created gauge per counter
    # and histogram child, which doubled the series and changed with the setting.
    text = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()

    names = {line.split("{")[0].split(" ")[0] for line in text.splitlines()}
    assert [name for name in names if name.endswith("_created")] == []
