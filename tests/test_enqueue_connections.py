"""Tasks queued on a Redis broker share one connection per process: a connection (a TLS
handshake with rediss://) for every completion cost a round trip or more each, 0.64 s a
completion where one round trip is 0.2 s over a slow link."""

import shutil

import pytest
import redis

from config.queue import enqueue_on_commit
from tests.processes import free_port, stop_group
from tests.test_qcluster_outage_logs import start_redis

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]

TASKS = 20


@pytest.fixture
def redis_broker(tmp_path, monkeypatch, settings):  # type: ignore[no-untyped-def]
    port = free_port()
    server = start_redis(port, tmp_path)
    url = f"redis://127.0.0.1:{port}/0"
    settings.Q_CLUSTER = {k: v for k, v in settings.Q_CLUSTER.items() if k != "orm"} | {
        "redis": url
    }
    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)
    monkeypatch.setattr("django_q.conf.Conf.ORM", None)
    monkeypatch.setattr("django_q.conf.Conf.REDIS", url)
    yield redis.Redis(port=port)
    stop_group(server)


def test_tasks_queued_one_after_another_share_one_broker_connection(
    redis_broker, django_capture_on_commit_callbacks
) -> None:
    before = redis_broker.info("stats")["total_connections_received"]

    with django_capture_on_commit_callbacks(execute=True):
        for n in range(TASKS):
            enqueue_on_commit("evaluation.tasks.scoring_sweep", n)

    assert redis_broker.llen("django_q:diagnosis:q") == TASKS
    opened = redis_broker.info("stats")["total_connections_received"] - before
    assert opened == 1
