"""rescore --opinion against an endpoint nobody answers: the day's budget is kept and
the run stops early, saying the endpoint is unreachable."""

import io
import socket
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.models import OpinionBudget
from evaluation.services import UNREACHABLE_IN_A_ROW, session_evaluate
from tests.chat_server import chat_server
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

SESSIONS = 6


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port of 127.0.0.1 held by a socket that never listens: connections are refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def llm_at(settings, base_url: str) -> None:  # type: ignore[no-untyped-def]
    settings.OPINION_PROVIDER = "openai"
    settings.OPINION_BASE_URL = base_url
    settings.OPINION_MODEL = "local-model"
    settings.OPINION_TIMEOUT = 1.0
    settings.OPINION_MAX_RETRIES = 1
    settings.OPINION_DAILY_BUDGET = 100


def scored_sessions() -> None:
    for n in range(SESSIONS):
        DiagnosisSessionFactory(succeeded=True, session_id=f"u{n}")
        session_evaluate(session_id=f"u{n}")


def budget_spent() -> int:
    return sum(OpinionBudget.objects.values_list("calls", flat=True))


def test_an_unreachable_endpoint_spends_no_budget_and_stops_the_run_early(
    settings, closed_port
) -> None:
    scored_sessions()
    llm_at(settings, f"http://127.0.0.1:{closed_port}/v1")

    with pytest.raises(CommandError) as raised:
        call_command("rescore", "--opinion", "--all", "--no-progress", stdout=io.StringIO())

    assert budget_spent() == 0
    message = str(raised.value)
    assert "unreachable" in message
    assert f"{UNREACHABLE_IN_A_ROW} calls in a row" in message
    assert "0 opinion(s) formed" in message
    assert f"{SESSIONS - UNREACHABLE_IN_A_ROW} not tried" in message


def test_a_working_endpoint_spends_one_unit_per_opinion(settings) -> None:
    scored_sessions()
    with chat_server() as server:
        llm_at(settings, server.base_url)
        out = io.StringIO()

        call_command("rescore", "--opinion", "--all", "--no-progress", stdout=out)

    assert f"Formed {SESSIONS} opinion(s)" in out.getvalue()
    assert budget_spent() == SESSIONS
