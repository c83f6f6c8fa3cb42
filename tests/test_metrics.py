"""GET /metrics: the Prometheus text format, counters that follow what happened, access."""

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from django.test import Client
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory
from tests.processes import ROOT, child_env, start_gunicorn, stop_group, wait_for

pytestmark = pytest.mark.django_db


def scrape(client: Client | None = None, **extra: str) -> dict[tuple[str, tuple], float]:
    """Every sample of a scrape from loopback, as {(name, sorted labels): value}."""
    response = (client or Client()).get("/metrics", REMOTE_ADDR="127.0.0.1", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return parse(response.content.decode())


def parse(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


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


@pytest.fixture(autouse=True)
def fresh_broker_log(monkeypatch):  # type: ignore[no-untyped-def]
    """Each test starts with no broker failure logged in this process."""
    from config import failure_log, metrics_scrape

    monkeypatch.setattr(metrics_scrape, "_broker_failures", failure_log.RepeatedFailures())
    return metrics_scrape


def test_a_readable_broker_says_the_queue_is_up() -> None:
    samples = scrape()

    assert value(samples, "diagnosis_queue_up") == 1
    assert ("diagnosis_queue_waiting_tasks", ()) in samples


def test_an_address_not_allowed_is_refused_with_json(client) -> None:
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9")

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


def test_a_bearer_token_opens_it_from_anywhere_and_a_wrong_one_does_not(client, settings) -> None:
    settings.METRICS_BEARER_TOKEN = "s3cret-scrape-token"

    right = client.get(
        "/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token"
    )
    wrong = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer nope")
    missing = client.get("/metrics", REMOTE_ADDR="203.0.113.9")

    assert right.status_code == 200
    assert (wrong.status_code, missing.status_code) == (401, 401)
    assert wrong["WWW-Authenticate"] == "Bearer"
    assert "s3cret" not in wrong.content.decode()


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_may_be_written_in_any_case(client, settings, scheme: str) -> None:
    settings.METRICS_BEARER_TOKEN = "s3cret-scrape-token"

    right = client.get(
        "/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION=f"{scheme} s3cret-scrape-token"
    )
    wrong = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION=f"{scheme} nope")

    assert right.status_code == 200
    assert wrong.status_code == 401
    assert wrong.json()["message"] == "invalid bearer token"


def test_the_token_itself_is_compared_exactly(client, settings) -> None:
    settings.METRICS_BEARER_TOKEN = "s3cret-scrape-token"

    shouted = client.get(
        "/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer S3CRET-SCRAPE-TOKEN"
    )

    assert shouted.status_code == 401


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "options"])
def test_a_method_other_than_get_or_head_is_refused_with_405_and_allow(
    client, settings, method: str
) -> None:
    settings.METRICS_BEARER_TOKEN = "s3cret-scrape-token"

    response = getattr(client, method)(
        "/metrics", REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token"
    )

    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"
    assert response.json()["code"] == "method_not_allowed"
    assert "diagnosis_" not in response.content.decode()


def test_head_is_served_as_get_is(client) -> None:
    response = client.head("/metrics", REMOTE_ADDR="127.0.0.1")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")


def test_an_allowed_network_may_scrape(client, settings) -> None:
    import ipaddress

    settings.METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network("10.20.0.0/16")]

    assert client.get("/metrics", REMOTE_ADDR="10.20.3.4").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


def test_a_bad_allowed_ips_setting_fails_at_start_up() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={
            **child_env(),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "METRICS_ALLOWED_IPS": "nope",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "METRICS_ALLOWED_IPS" in result.stderr


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_workers_of_gunicorn_and_qcluster_add_up_in_one_scrape(tmp_path, api) -> None:
    multiproc = tmp_path / "prometheus"
    multiproc.mkdir()
    env = child_env(PROMETHEUS_MULTIPROC_DIR=str(multiproc), Q_POLL="0.1")
    key = api.raw_key
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    web, base = start_gunicorn(env, workers=2)
    try:
        headers = {"Authorization": f"Api-Key {key}", "Content-Type": "application/json"}
        requests = 40
        for n in range(requests):
            body = json.dumps({"sessionId": f"mp-{n}", "query": "q"}).encode()
            urllib.request.urlopen(
                urllib.request.Request(f"{base}/api/sessions", data=body, headers=headers),
                timeout=30,
            ).close()
        for n in range(5):
            body = json.dumps({"status": "SUCCESS", "answer": "a"}).encode()
            urllib.request.urlopen(
                urllib.request.Request(
                    f"{base}/api/sessions/mp-{n}/complete", data=body, headers=headers
                ),
                timeout=30,
            ).close()

        def read() -> dict:
            with urllib.request.urlopen(f"{base}/metrics", timeout=30) as response:
                return parse(response.read().decode())

        # The qcluster's workers score the five; their samples join the web workers'.
        wait_for(
            lambda: value(read(), "diagnosis_evidence_score_count") == 5,
            timeout=60,
            what="the worker's score samples in the scrape",
        )
        samples = read()
        created = value(
            samples,
            "diagnosis_http_requests_total",
            route="session-list",
            method="POST",
            status="201",
        )
        pids = {p.name.split("_")[-1] for p in multiproc.glob("*.db")}
    finally:
        stop_group(web)
        stop_group(worker)

    assert created == requests  # both gunicorn workers' counts, added up
    assert value(samples, "diagnosis_sessions_completed_total", status="SUCCESS") == 5
    assert len(pids) >= 3  # two web workers and at least one task worker wrote samples


def test_a_sample_file_a_starting_process_has_not_sized_yet_does_not_break_the_scrape(
    tmp_path, monkeypatch
) -> None:
    # prometheus_client creates a process's file empty and sizes it after: a scrape at that
    # moment (or a process killed in it, e.g. a recycled worker) found an empty file.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    samples = MmapedDict(str(tmp_path / "counter_101.db"))
    key = json.dumps(["probe_events", "probe_events_total", {}, "Events."], sort_keys=True)
    samples.write_value(key, 3.0, 0.0)
    samples.close()
    (tmp_path / "counter_102.db").write_bytes(b"")

    assert value(scrape(), "probe_events_total") == 3.0


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


def test_devserver_starts_the_web_and_worker_on_an_emptied_metrics_directory(
    settings, monkeypatch
) -> None:
    from diagnosis.management.commands.devserver import _fresh_metrics_dir

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    earlier = Path(settings.VAR_DIR) / "prometheus"
    earlier.mkdir(parents=True, exist_ok=True)
    (earlier / "counter_4242.db").write_bytes(b"an earlier run's samples")

    directory = _fresh_metrics_dir()

    assert directory == earlier
    assert list(directory.iterdir()) == []


def test_a_configured_metrics_directory_loses_only_its_sample_files(tmp_path, monkeypatch) -> None:
    from diagnosis.management.commands.devserver import _fresh_metrics_dir

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    (tmp_path / "histogram_77.db").write_bytes(b"old")
    (tmp_path / "notes.txt").write_text("someone else's")

    assert _fresh_metrics_dir() == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize(
    ("workers", "shared", "warned"),
    [(2, False, True), (2, True, False), (1, False, False)],
    ids=["two-workers-no-directory", "two-workers-a-directory", "one-worker"],
)
def test_gunicorn_warns_at_start_up_when_its_workers_would_each_count_alone(
    tmp_path, workers: int, shared: bool, warned: bool
) -> None:
    extra = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus")} if shared else {}
    env = child_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", **extra)
    log_path = tmp_path / "gunicorn.log"
    with log_path.open("w") as log:
        web, _ = start_gunicorn(
            env, workers=workers, log=log, args=("-c", "config/gunicorn.conf.py")
        )
        stop_group(web)

    warnings = [
        line
        for line in log_path.read_text().splitlines()
        if '"level": "WARNING"' in line and "PROMETHEUS_MULTIPROC_DIR" in line
    ]
    assert len(warnings) == (1 if warned else 0), log_path.read_text()


def test_the_scrape_has_no_created_series_with_or_without_a_shared_directory(client) -> None:
    # The multi-process scrape has none; one process's had a *_created gauge per counter
    # and histogram child, which doubled the series and changed with the setting.
    text = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()

    names = {line.split("{")[0].split(" ")[0] for line in text.splitlines()}
    assert [name for name in names if name.endswith("_created")] == []
