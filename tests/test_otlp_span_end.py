"""A tool span sent without its end (endTimeUnixNano 0) lasted no one knows how long: its
call is stored without a duration (null) and the answer says why, as for one that ended
before it started. The admin timeline shows no duration for a call stored without one,
rather than one its clock made up."""

import re

import pytest

from diagnosis.models import DiagnosisSession, ToolInvocation
from tests.factories import DiagnosisSessionFactory
from tests.otlp import export, kb_tool, new_span_id, new_trace_id, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

START = 1_764_868_417_000_000_000  # ns
SESSION_PAGE = "/admin/diagnosis/diagnosissession/{}/change/"


def a_session_with_a_tool_span(client, key: str, *, start_ns: int, end_ns: int):  # type: ignore[no-untyped-def]
    trace, root = new_trace_id(), new_span_id()
    tool = kb_tool(trace, root)
    tool.start_time_unix_nano, tool.end_time_unix_nano = start_ns, end_ns
    agent = span(
        "invoke_agent ops",
        trace_id=trace,
        span_id=root,
        start_ns=START,
        attributes={"session.id": "span-end-1", "input.value": "为什么 504？"},
    )
    return tool, post(client, export(tool, agent), key=key)


def durations_shown(page: str) -> list[str]:
    return re.findall(r'<span class="ms">(.*?)</span>', page)


def test_a_tool_span_without_an_end_is_stored_without_a_duration(client, key):
    tool, response = a_session_with_a_tool_span(client, key, start_ns=START, end_ns=0)

    assert response.status_code == 200, response.content
    told = response_of(response).partial_success
    assert told.rejected_spans == 0
    assert f"工具 span {tool.span_id.hex()}：" in told.error_message
    assert "durationMs 为空" in told.error_message
    fact = ToolInvocation.objects.get()
    assert (fact.tool_name, fact.match_level, fact.duration_ms) == ("kb", "L0", None)


def test_the_timeline_shows_no_duration_for_a_span_sent_without_an_end(client, key, admin_client):
    a_session_with_a_tool_span(client, key, start_ns=START, end_ns=0)
    session = DiagnosisSession.objects.get(session_id="span-end-1")

    page = admin_client.get(SESSION_PAGE.format(session.pk)).content.decode()

    shown = durations_shown(page)
    assert len(shown) == 2
    assert "10 ms" in shown  # the agent's span
    assert [d for d in shown if d != "10 ms"] == ["—"]


def test_the_timeline_shows_no_duration_for_a_span_whose_clock_made_no_sense(
    client, key, admin_client
):
    a_session_with_a_tool_span(client, key, start_ns=1, end_ns=2**64 - 1)
    session = DiagnosisSession.objects.get(session_id="span-end-1")
    assert ToolInvocation.objects.get().duration_ms is None

    page = admin_client.get(SESSION_PAGE.format(session.pk)).content.decode()

    assert "18446744073709" not in page
    assert sorted(durations_shown(page)) == ["10 ms", "—"]


def test_the_timeline_shows_no_duration_for_a_rest_call_stored_without_one(admin_client):
    session = DiagnosisSessionFactory(status="SUCCESS", answer="a")
    session.tool_invocations.create(
        tool_name="QueryInternalDocsTools", status="SUCCESS", match_level="L0", hit_count=1
    )

    page = admin_client.get(SESSION_PAGE.format(session.pk)).content.decode()

    assert durations_shown(page) == ["—"]
