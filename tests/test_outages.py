"""The cache, the broker or the database out of reach: the API answers 503 in JSON (or does
what it can and says so), /readyz names the outage, /metrics still answers. Nothing is a 500.

An outage here is a setting pointed at an address where nothing listens (port 1)."""

import json
import logging
import urllib.error
import urllib.request

import pytest
from django.db import OperationalError, connection

from diagnosis.models import DiagnosisSession
from evaluation.tasks import scoring_sweep
from tests.factories import DiagnosisSessionFactory
from tests.metrics_samples import parse, scrape, value
from tests.processes import child_env, start_gunicorn, stop_group
from tests.silent_server import SilentServer

pytestmark = pytest.mark.django_db

UNREACHABLE_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
    }
}


@pytest.fixture
def broker_unreachable(monkeypatch, settings):  # type: ignore[no-untyped-def]
    """The Redis broker where nothing listens, its URL holding a password, as Q_REDIS_URL
    sets it (django-q2 reads its settings once, into Conf); tasks queued, not run inline."""
    url = "redis://:broker-s3cret@127.0.0.1:1/7"
    settings.Q_CLUSTER = {k: v for k, v in settings.Q_CLUSTER.items() if k != "orm"} | {
        "redis": url
    }
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    monkeypatch.setattr("django_q.conf.Conf.ORM", None)
    monkeypatch.setattr("django_q.conf.Conf.REDIS", url)


def test_an_unreachable_cache_makes_the_api_answer_503_with_retry_after(api, settings) -> None:
    DiagnosisSessionFactory(session_id="c-1")
    settings.CACHES = UNREACHABLE_CACHE

    response = api.get("/api/sessions/c-1")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "service_unavailable"


def test_an_unreachable_cache_answers_feedback_in_the_feedback_contracts_shape(
    api, settings
) -> None:
    DiagnosisSessionFactory(session_id="c-2", status="SUCCESS", answer="a")
    settings.CACHES = UNREACHABLE_CACHE

    response = api.post("/api/feedback", {"sessionId": "c-2", "feedback": "useful"}, format="json")

    assert response.status_code == 503
    assert response.json() == {
        "success": False,
        "message": "服务暂不可用，请稍后重试",
        "caseId": None,
    }


@pytest.mark.django_db(transaction=True)
def test_a_completion_the_broker_cannot_take_is_kept_answered_logged_counted_and_swept_up(
    api, broker_unreachable, settings, caplog
) -> None:
    DiagnosisSessionFactory(session_id="b-1")
    before = value(scrape(), "diagnosis_enqueue_failures_total")
    body = {"status": "SUCCESS", "answer": "根因：长事务。"}

    first = api.post("/api/sessions/b-1/complete", body, format="json")
    again = api.post("/api/sessions/b-1/complete", body, format="json")

    assert (first.status_code, again.status_code) == (200, 200)
    assert first.json()["status"] == "SUCCESS"
    session = DiagnosisSession.objects.get(session_id="b-1")
    assert (session.status, session.self_evaluation) == ("SUCCESS", None)
    assert value(scrape(), "diagnosis_enqueue_failures_total") == before + 1
    (failure,) = [r for r in caplog.records if r.name == "config.queue"]
    assert failure.levelno == logging.ERROR
    assert (failure.session_id, failure.task) == ("b-1", "evaluation.tasks.session_score")
    assert "broker-s3cret" not in caplog.text

    # The scheduled sweep scores the SUCCESS session whose task never reached the queue.
    settings.SCORING_SWEEP_AFTER = 0
    assert scoring_sweep() == 1
    assert DiagnosisSession.objects.get(session_id="b-1").self_evaluation is not None


def _get(url: str, key: str | None = None) -> tuple[int, dict[str, str], str]:
    headers = {"Authorization": f"Api-Key {key}"} if key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("outage", "down_check"),
    [
        # The ORM broker's database, at a MySQL port where nothing listens (the MySQL
        # driver is installed where the suite runs on MySQL/MariaDB only).
        pytest.param(
            {"DATABASE_URL": "mysql://app:pw@127.0.0.1:1/diagnosis"},
            "database",
            marks=pytest.mark.mysql,
        ),
        # The cache and the Redis broker both gone.
        ({"REDIS_URL": "redis://127.0.0.1:1/0", "Q_REDIS_URL": "redis://127.0.0.1:1/7"}, "cache"),
    ],
    ids=["database", "redis"],
)
def test_under_gunicorn_an_outage_is_503_json_a_named_readyz_check_and_a_whole_scrape(
    tmp_path, api, outage, down_check
) -> None:
    log_path = tmp_path / "gunicorn.log"
    env = child_env(DB_CONNECT_TIMEOUT="2", READYZ_WORKER_MAX_AGE="0", LOG_FORMAT="json")
    env.update(outage)
    with log_path.open("w") as log:
        web, base = start_gunicorn(env, workers=1, log=log)
        try:
            api_status, api_headers, api_body = _get(f"{base}/api/sessions/x-1", api.raw_key)
            probes = [_get(f"{base}/readyz") for _ in range(4)]
            metrics_status, _headers, metrics_body = _get(f"{base}/metrics")
        finally:
            stop_group(web)
    logged = log_path.read_text()

    assert (api_status, api_headers["Retry-After"]) == (503, "5")
    assert json.loads(api_body)["code"] == "service_unavailable"
    assert {status for status, _h, _b in probes} == {503}
    assert json.loads(probes[0][2])["checks"][down_check] == "unreachable"
    assert metrics_status == 200
    samples = parse(metrics_body)
    assert value(samples, "diagnosis_queue_up") == 0
    # The other series are all there: the failed API call above is counted.
    counted = {"route": "session-detail", "method": "GET", "status": "503"}
    assert value(samples, "diagnosis_http_requests_total", **counted) == 1
    # Four failing probes: one warning when readiness changed, no ERROR per probe.
    assert "Service Unavailable: /readyz" not in logged
    assert logged.count("readiness: not ready") == 1


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_under_gunicorn_a_cache_that_hangs_makes_the_api_answer_503_before_the_worker_is_killed(
    api,
) -> None:
    silent = SilentServer()
    env = child_env(READYZ_WORKER_MAX_AGE="0")
    env["REDIS_URL"] = f"redis://127.0.0.1:{silent.port}/0"
    web, base = start_gunicorn(env, workers=1, args=("-c", "config/gunicorn.conf.py"))
    try:
        api_status, api_headers, api_body = _get(f"{base}/api/sessions/x-1", api.raw_key)
    finally:
        stop_group(web)
        silent.close()

    assert (api_status, api_headers["Retry-After"]) == (503, "5")
    assert json.loads(api_body)["code"] == "service_unavailable"


@pytest.fixture
def fresh_outage_log(monkeypatch):  # type: ignore[no-untyped-def]
    from config import middleware

    monkeypatch.setattr(middleware, "_outage_log", middleware._OutageLog())
    return middleware


def test_an_outage_logs_one_error_a_minute_with_the_requests_answered_since(
    api, settings, caplog, fresh_outage_log, monkeypatch
) -> None:
    DiagnosisSessionFactory(session_id="c-3")
    settings.CACHES = UNREACHABLE_CACHE

    with caplog.at_level(logging.INFO):
        statuses = [api.get("/api/sessions/c-3").status_code for _ in range(4)]
        monkeypatch.setattr(fresh_outage_log, "OUTAGE_LOG_SECONDS", 0.0)  # a minute later
        statuses.append(api.get("/api/sessions/c-3").status_code)

    assert statuses == [503] * 5
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.name for r in errors] == ["config.middleware", "config.middleware"]
    assert errors[0].getMessage().startswith("cache unavailable: ")
    assert errors[1].getMessage().endswith("(3 more requests answered 503 since the last line)")


def test_the_first_request_served_after_an_outage_says_it_is_over_with_the_uncounted_503s(
    api, settings, caplog, fresh_outage_log
) -> None:
    DiagnosisSessionFactory(session_id="c-4")
    working_caches = settings.CACHES
    settings.CACHES = UNREACHABLE_CACHE

    with caplog.at_level(logging.INFO):
        refused = [api.get("/api/sessions/c-4").status_code for _ in range(3)]
        settings.CACHES = working_caches
        served = [api.get("/api/sessions/c-4").status_code for _ in range(2)]

    assert (refused, served) == ([503] * 3, [200, 200])
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "config.middleware"]
    assert lines[0][0] == "ERROR" and lines[0][1].startswith("cache unavailable: ")
    assert lines[1:] == [
        ("WARNING", "cache available again (2 more requests answered 503 since the last line)")
    ]


def every_query_fails(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
    """The database gone: every query fails as the driver says a lost server."""
    raise OperationalError(2013, "Lost connection to server during query")


@pytest.mark.parametrize(
    ("chosen", "language", "title", "words"),
    [
        (None, "zh-hans", "服务暂不可用", "数据库暂不可用，请稍后重试。"),
        ("en", "en", "Service unavailable", "The database is unavailable; retry later."),
    ],
    ids=["zh-hans-by-default", "en-chosen"],
)
def test_an_admin_page_in_a_database_outage_is_a_503_page_in_the_admin_language(
    admin_client, settings, fresh_outage_log, chosen, language, title, words
) -> None:
    if chosen:
        admin_client.cookies[settings.LANGUAGE_COOKIE_NAME] = chosen

    with connection.execute_wrapper(every_query_fails):
        response = admin_client.get("/admin/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response["Content-Type"] == "text/html; charset=utf-8"
    page = response.content.decode()
    assert page.startswith("<!DOCTYPE html>")
    assert f'<html lang="{language}">' in page
    assert f"<title>{title}</title>" in page
    assert f"<p>{words}</p>" in page
