"""Scraping GET /metrics from loopback and reading its samples, each test with no broker
failure logged yet."""

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families


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


@pytest.fixture(autouse=True)
def fresh_broker_log(monkeypatch):  # type: ignore[no-untyped-def]
    """Each test starts with no broker failure logged in this process."""
    from config import failure_log, metrics_scrape

    monkeypatch.setattr(metrics_scrape, "_broker_failures", failure_log.RepeatedFailures())
    return metrics_scrape
