"""/metrics says whether the scrape could read the database and the cache
(`diagnosis_database_up`, `diagnosis_cache_up`), each within PROBE_DB_DEADLINE_SECONDS, so
that an outage of either shows in Prometheus and not only as the API's 503s."""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from django.db import OperationalError, connection
from django.utils import timezone

from config import deadline
from evaluation.models import WorkerHeartbeat
from tests.metrics_samples import scrape, value
from tests.silent_server import SilentServer

pytestmark = pytest.mark.django_db

ALERTS = Path(__file__).parent.parent / "config/grafana/alerts.yml"

# Redis' own read timeout here: longer than any scrape waits, so only the deadline can
# answer while the server is silent, and short enough that a scrape that waits it out
# fails its test rather than hanging the suite.
CLIENT_TIMEOUT = 20


def every_query_fails(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
    """The database gone: every query fails as the driver says a lost server."""
    raise OperationalError(2013, "Lost connection to server during query")


def redis_cache_at(port: int) -> dict:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
            "OPTIONS": {"socket_timeout": CLIENT_TIMEOUT},
        }
    }


@pytest.fixture
def silent_cache(settings) -> Iterator[SilentServer]:  # type: ignore[no-untyped-def]
    server = SilentServer()
    settings.CACHES = redis_cache_at(server.port)
    settings.PROBE_DB_DEADLINE_SECONDS = 1
    yield server
    server.close()
    # The next test starts with the cache's probe thread free.
    if deadline.CACHE.pending is not None:
        deadline.CACHE.pending.exception()


def test_a_scrape_that_reads_the_database_and_the_cache_says_both_are_up() -> None:
    samples = scrape()

    assert value(samples, "diagnosis_database_up") == 1
    assert value(samples, "diagnosis_cache_up") == 1


def test_a_scrape_while_the_database_is_unreachable_answers_with_the_database_down() -> None:
    WorkerHeartbeat.objects.create(host="worker-a", beat_at=timezone.now())

    # Inside the test's transaction the scrape reads the database in this thread
    # (config/deadline.py), through this connection.
    with connection.execute_wrapper(every_query_fails):
        samples = scrape()

    assert samples[("diagnosis_database_up", ())] == 0
    assert samples[("diagnosis_cache_up", ())] == 1
    assert ("diagnosis_worker_heartbeat_age_seconds", ()) not in samples
    assert ("diagnosis_enqueue_failures_total", ()) in samples  # the rest is served
    assert samples[("diagnosis_queue_up", ())] == 0  # the ORM broker is that database


def test_the_database_is_up_again_at_the_first_scrape_that_reads_it() -> None:
    with connection.execute_wrapper(every_query_fails):
        down = value(scrape(), "diagnosis_database_up")

    assert (down, value(scrape(), "diagnosis_database_up")) == (0, 1)


def test_a_scrape_while_the_cache_is_unreachable_answers_with_the_cache_down(settings) -> None:
    settings.CACHES = redis_cache_at(1)  # nothing listens there

    samples = scrape()

    assert samples[("diagnosis_cache_up", ())] == 0
    assert samples[("diagnosis_database_up", ())] == 1
    assert samples[("diagnosis_queue_up", ())] == 1


def test_a_scrape_whose_cache_hangs_answers_at_the_deadline_with_the_cache_down(
    silent_cache: SilentServer,
) -> None:
    samples = scrape()

    assert samples[("diagnosis_cache_up", ())] == 0
    assert samples[("diagnosis_database_up", ())] == 1
    assert samples[("diagnosis_queue_up", ())] == 1


def test_a_scrape_while_the_earlier_cache_read_still_hangs_says_the_cache_is_down(
    silent_cache: SilentServer,
) -> None:
    scrape()

    samples = scrape()

    assert samples[("diagnosis_cache_up", ())] == 0
    assert samples[("diagnosis_database_up", ())] == 1


# --- The alerts ---------------------------------------------------------------------------


def rules() -> dict[str, dict]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"]}


@pytest.mark.parametrize(
    ("alert", "expr"),
    [
        ("DiagnosisDatabaseDown", "max by (namespace, job) (diagnosis_database_up) == 0"),
        ("DiagnosisCacheDown", "max by (namespace, job) (diagnosis_cache_up) == 0"),
    ],
)
def test_a_database_or_cache_no_scrape_could_read_for_a_minute_pages(alert, expr) -> None:
    rule = rules()[alert]

    assert (rule["expr"].strip(), rule["for"]) == (expr, "1m")
    assert rule["labels"]["severity"] == "page"
    assert rule["annotations"]["summary"] and rule["annotations"]["runbook"]


def test_a_worker_never_started_is_not_told_while_the_database_is_down() -> None:
    expr = " ".join(rules()["DiagnosisWorkerNeverStarted"]["expr"].split())

    assert expr.startswith(
        "min by (namespace, job) (diagnosis_queue_up) == 1 unless on (namespace, job) "
        "count by (namespace, job) (diagnosis_worker_heartbeat_age_seconds)"
    )
    assert expr.endswith(
        "and on (namespace, job) max by (namespace, job) (diagnosis_database_up) == 1"
    )


@pytest.fixture
def hung_database_read(monkeypatch, settings) -> Iterator[Callable[[], None]]:  # type: ignore[no-untyped-def]
    from config import metrics_scrape
    from tests.test_probe_deadlines import HeldCollector, Hold, _wait_for_the_probe_thread

    held = Hold()
    settings.PROBE_DB_DEADLINE_SECONDS = 1
    monkeypatch.setattr(metrics_scrape, "SCRAPE_COLLECTORS", [HeldCollector(held)])
    yield held.released.set
    held.released.set()
    _wait_for_the_probe_thread()


@pytest.mark.django_db(transaction=True)
def test_a_scrape_whose_database_read_hangs_answers_at_the_deadline_with_the_database_down(
    hung_database_read: Callable[[], None],
) -> None:
    samples = scrape()

    assert samples[("diagnosis_database_up", ())] == 0
    assert samples[("diagnosis_cache_up", ())] == 1
