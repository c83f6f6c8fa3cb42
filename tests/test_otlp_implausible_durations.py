"""POST /v1/traces: a tool span whose clock makes no sense (it ends more than 2^31 ms,
some 24.8 days, after it started, or before it started) never loses its call: the fact
is stored without a duration (null) and the answer says why, as for a hint ignored."""

import pytest

from diagnosis.models import Span, ToolInvocation
from tests.otlp import export, kb_tool, new_span_id, new_trace_id, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

MS = 1_000_000  # nanoseconds


def tool_with_times(*, start_ns: int, end_ns: int):  # type: ignore[no-untyped-def]
    trace, root = new_trace_id(), new_span_id()
    tool = kb_tool(trace, root)
    tool.start_time_unix_nano, tool.end_time_unix_nano = start_ns, end_ns
    return tool, span("invoke_agent ops", trace_id=trace, span_id=root)


def test_a_tool_span_lasting_past_the_int_limit_is_stored_without_a_duration(client, key):
    start = 1_764_868_417_000_000_000
    tool, root = tool_with_times(start_ns=start, end_ns=start + (2**31) * MS)

    response = post(client, export(tool, root), key=key)

    assert response.status_code == 200, response.content
    told = response_of(response).partial_success
    assert told.rejected_spans == 0
    assert f"工具 span {tool.span_id.hex()}：" in told.error_message
    assert "2147483648 ms" in told.error_message
    assert "请确保" not in told.error_message
    fact = ToolInvocation.objects.get()
    assert (fact.tool_name, fact.match_level, fact.duration_ms) == ("kb", "L0", None)
    assert Span.objects.filter(span_id=tool.span_id.hex()).exists()


def test_a_tool_span_lasting_just_the_int_limit_keeps_its_duration(client, key):
    start = 1_764_868_417_000_000_000
    tool, root = tool_with_times(start_ns=start, end_ns=start + (2**31 - 1) * MS)

    response = post(client, export(tool, root), key=key)

    assert not response_of(response).HasField("partial_success")
    assert ToolInvocation.objects.get().duration_ms == 2**31 - 1


def test_a_tool_span_ending_before_it_started_is_stored_without_a_duration(client, key):
    start = 1_764_868_417_000_000_000
    tool, root = tool_with_times(start_ns=start, end_ns=start - 5 * MS)

    response = post(client, export(tool, root), key=key)

    told = response_of(response).partial_success
    assert told.rejected_spans == 0
    assert f"工具 span {tool.span_id.hex()}：" in told.error_message
    assert "早于" in told.error_message
    assert ToolInvocation.objects.get().duration_ms is None
