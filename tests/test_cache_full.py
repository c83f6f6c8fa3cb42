"""A Redis cache that answers but refuses writes (full under `maxmemory` with the
noeviction policy, or a read-only replica after a failover): the API answers the
outage's 503 with Retry-After, writing nothing, and /readyz says the cache refuses writes,
where feedback had answered 500 and /readyz "ok"."""

import shutil
import subprocess

import pytest
import redis

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory
from tests.processes import free_port, stop_group
from tests.test_qcluster_outage_logs import start_redis

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]


@pytest.fixture
def full_cache(tmp_path, settings):  # type: ignore[no-untyped-def]
    port = free_port()
    server: subprocess.Popen = start_redis(port, tmp_path)
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache_backend.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/0",
        }
    }
    client = redis.Redis(port=port)
    client.set("filler", "x" * 100_000)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "1")
    yield client
    stop_group(server)


def test_feedback_on_a_full_cache_is_the_outages_503_and_records_nothing(api, full_cache) -> None:
    DiagnosisSessionFactory(session_id="full-1", status="SUCCESS", answer="a")

    response = api.post(
        "/api/feedback", {"sessionId": "full-1", "feedback": "useful"}, format="json"
    )

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["message"] == "服务暂不可用，请稍后重试"
    assert DiagnosisSession.objects.get(session_id="full-1").feedback is None


def test_readyz_says_a_full_cache_refuses_writes(client, full_cache) -> None:
    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["cache"] == "refuses writes"
