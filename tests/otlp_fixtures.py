"""The fixtures the /v1/traces tests share: a module imports them (`from
tests.otlp_fixtures import otlp_agent_key, otlp_committing_client`) and has `key` and
`client`."""

import pytest
from django.test import Client

from tests.otlp import CommittingClient


@pytest.fixture(name="key")
def otlp_agent_key(make_client) -> str:  # type: ignore[no-untyped-def]
    """An `agent` key's raw value (a module imports this as its `key` fixture)."""
    return make_client("agent").raw_key


@pytest.fixture(name="client")
def otlp_committing_client(django_capture_on_commit_callbacks) -> Client:  # type: ignore[no-untyped-def]
    """A CommittingClient (a module imports this as its `client` fixture)."""
    committing = CommittingClient()
    committing.capture = django_capture_on_commit_callbacks
    return committing
