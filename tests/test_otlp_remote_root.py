"""POST /v1/traces with spans whose parent is remote that are not the agent's top: a
tool endpoint the agent calls over HTTP (in its own process, or a tool server exporting
here too) continues the agent's trace. The agent's parentless span stays the root; a
remote-parented span is the root only when the agent's run is below it (a gateway)."""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from diagnosis.models import DiagnosisSession, Span, ToolInvocation
from tests.otlp import post
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

ANSWER = "nginx 上游 payment 超时：扩容 payment 并调大 proxy_read_timeout。"
AGENT_RUN = {
    "gen_ai.operation.name": "invoke_agent",
    "session.id": "qa5-self-1",
    "input.value": "nginx 为什么 504？",
    "output.value": ANSWER,
}
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "QueryNginx"}
TOOL_SERVER_OUTPUT = {"output.value": "upstream timed out"}
GATEWAY = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class Process:
    """A process's tracer, exporting what it finishes into memory (its own provider)."""

    def __init__(self, name: str) -> None:
        self.exported = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exported))
        self.tracer = provider.get_tracer(name)

    def batch(self, *names: str):  # type: ignore[no-untyped-def]
        """The finished spans of these names as one OTLP request, as the SDK encodes it."""
        spans = [s for s in self.exported.get_finished_spans() if s.name in names]
        assert sorted(s.name for s in spans) == sorted(names)
        return encode_spans(spans)

    @contextmanager
    def server(self, name: str, headers: dict[str, str], **attributes: str) -> Iterator[None]:
        """An HTTP server span continuing the context that came in `headers`."""
        context = TraceContextTextMapPropagator().extract(headers)
        with self.tracer.start_as_current_span(
            name, context=context, kind=SpanKind.SERVER, attributes=attributes
        ):
            yield


@contextmanager
def an_http_call(process: Process, name: str) -> Iterator[dict[str, str]]:
    """A client span; the headers it sends carry its `traceparent`."""
    headers: dict[str, str] = {}
    with process.tracer.start_as_current_span(name, kind=SpanKind.CLIENT):
        TraceContextTextMapPropagator().inject(headers)
        yield headers


def an_agent_calling_its_own_tool_endpoint() -> Process:
    """invoke_agent (no parent) > execute_tool > GET (client) > GET (server), one process."""
    agent = Process("ops-agent")
    with (
        agent.tracer.start_as_current_span("invoke_agent ops", attributes=AGENT_RUN),
        agent.tracer.start_as_current_span("execute_tool QueryNginx", attributes=TOOL),
        an_http_call(agent, "GET /tools/nginx") as headers,
        agent.server("GET /tools/nginx", headers, **TOOL_SERVER_OUTPUT),
    ):
        pass
    return agent


def an_agent_calling_a_tool_server() -> tuple[Process, Process]:
    """The same call, the tool server being another process exporting here too."""
    agent, tool_server = Process("ops-agent"), Process("nginx-tools")
    with (
        agent.tracer.start_as_current_span("invoke_agent ops", attributes=AGENT_RUN),
        agent.tracer.start_as_current_span("execute_tool QueryNginx", attributes=TOOL),
        an_http_call(agent, "GET /tools/nginx") as headers,
        tool_server.server("GET /tools/nginx", headers, **TOOL_SERVER_OUTPUT),
    ):
        pass
    return agent, tool_server


def assert_completed_with_the_agents_answer() -> None:
    session = DiagnosisSession.objects.get(session_id="qa5-self-1")
    assert (session.status, session.query, session.answer) == (
        "SUCCESS",
        AGENT_RUN["input.value"],
        ANSWER,
    )
    assert ToolInvocation.objects.get(session=session).tool_name == "QueryNginx"


def assert_the_tool_endpoint_is_no_agent() -> None:
    roles = {
        (s.name, s.parent_span_id != "", s.role)
        for s in Span.objects.filter(session_id="qa5-self-1")
    }
    assert roles == {
        ("invoke_agent ops", False, "agent"),
        ("execute_tool QueryNginx", True, "tool"),
        ("GET /tools/nginx", True, "other"),
    }
    assert Span.objects.filter(name="GET /tools/nginx").count() == 2


def test_an_agent_calling_its_own_tool_endpoint_completes_with_the_agents_answer(client, key):
    agent = an_agent_calling_its_own_tool_endpoint()
    request = encode_spans(agent.exported.get_finished_spans())
    flags = sorted(s.flags for s in request.resource_spans[0].scope_spans[0].spans)
    assert flags == [0x100, 0x100, 0x100, 0x300]

    response = post(client, request, key=key)

    assert response.status_code == 200, response.content
    assert_completed_with_the_agents_answer()
    assert_the_tool_endpoint_is_no_agent()


def test_a_tool_endpoints_server_span_sent_alone_completes_nothing(client, key):
    agent = an_agent_calling_its_own_tool_endpoint()
    server_span = [s for s in agent.exported.get_finished_spans() if s.kind == SpanKind.SERVER]

    post(client, encode_spans(server_span), key=key)

    assert DiagnosisSession.objects.get().status == "RUNNING"
    assert Span.objects.get().role == "other"


def test_a_tool_servers_span_sent_before_the_agents_spans_does_not_complete_the_session(
    client, key
):
    agent, tool_server = an_agent_calling_a_tool_server()

    post(client, tool_server.batch("GET /tools/nginx"), key=key)
    assert DiagnosisSession.objects.get().status == "RUNNING"
    post(
        client,
        agent.batch("invoke_agent ops", "execute_tool QueryNginx", "GET /tools/nginx"),
        key=key,
    )

    assert_completed_with_the_agents_answer()
    assert_the_tool_endpoint_is_no_agent()
    assert DiagnosisSession.objects.count() == 1  # the tool server's span moved over


def test_a_tool_servers_span_sent_after_the_agents_spans_changes_nothing(client, key):
    agent, tool_server = an_agent_calling_a_tool_server()

    post(
        client,
        agent.batch("invoke_agent ops", "execute_tool QueryNginx", "GET /tools/nginx"),
        key=key,
    )
    post(client, tool_server.batch("GET /tools/nginx"), key=key)

    assert_completed_with_the_agents_answer()
    assert_the_tool_endpoint_is_no_agent()


GATEWAY_RUN = {**AGENT_RUN, "session.id": "behind-gateway"}


def an_agent_behind_a_gateway() -> Process:
    """POST /chat (server, continuing the gateway's context) > invoke_agent > tool."""
    agent = Process("agent-service")
    with (
        agent.server("POST /chat", {"traceparent": GATEWAY}),
        agent.tracer.start_as_current_span("invoke_agent ops", attributes=GATEWAY_RUN),
        agent.tracer.start_as_current_span("execute_tool QueryNginx", attributes=TOOL),
    ):
        pass
    return agent


@pytest.mark.parametrize("server_span_first", [False, True], ids=["agent-first", "server-first"])
def test_a_gateways_traced_agent_completes_when_its_spans_come_in_two_requests(
    client, key, server_span_first
):
    agent = an_agent_behind_a_gateway()
    batches = [
        agent.batch("invoke_agent ops", "execute_tool QueryNginx"),
        agent.batch("POST /chat"),
    ]
    first, second = reversed(batches) if server_span_first else batches

    post(client, first, key=key)
    assert DiagnosisSession.objects.get().status == "RUNNING"
    post(client, second, key=key)

    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.answer) == (
        "behind-gateway",
        "SUCCESS",
        ANSWER,
    )
    assert session.self_evaluation is not None
    assert Span.objects.get(name="POST /chat").role == "other"


def test_a_tool_server_running_an_agent_of_its_own_does_not_displace_the_parentless_root(
    client, key
):
    agent, tool_server = Process("ops-agent"), Process("nginx-tools")
    with (
        agent.tracer.start_as_current_span("invoke_agent ops", attributes=AGENT_RUN),
        agent.tracer.start_as_current_span("execute_tool QueryNginx", attributes=TOOL),
        an_http_call(agent, "GET /tools/nginx") as headers,
        tool_server.server("GET /tools/nginx", headers, **TOOL_SERVER_OUTPUT),
        tool_server.tracer.start_as_current_span(
            "invoke_agent log-reader", attributes={"gen_ai.operation.name": "invoke_agent"}
        ),
    ):
        pass
    spans = [*tool_server.exported.get_finished_spans(), *agent.exported.get_finished_spans()]

    post(client, encode_spans(spans), key=key)

    assert_completed_with_the_agents_answer()
