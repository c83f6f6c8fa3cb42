"""GET /metrics: who may scrape it (loopback, allowed networks, a bearer token) and with
which methods."""

import subprocess
import sys

import pytest

from tests import metrics_samples
from tests.processes import ROOT, child_env

pytestmark = pytest.mark.django_db

# Fixtures shared with the other modules, taken by name.
fresh_broker_log = metrics_samples.fresh_broker_log


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
