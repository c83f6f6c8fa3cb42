"""An agent behind a traced gateway, its two spans exported in parallel requests (an
OpenTelemetry Collector with several sending consumers): the gateway-facing server span
(parent remote) and the `invoke_agent` span below it, carrying the session id and the
answer. Through real gunicorn workers on the suite's database, every session completes
with its answer, whichever request commits first and whatever each saw of the other,
and the worker scores it."""

import json
import os
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.otlp import PROTOBUF, export, new_span_id, new_trace_id, span
from tests.processes import wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

PAIRS = 30
ANSWER = "payment 上游超时：扩容 payment 并调大 proxy_read_timeout。"
REMOTE_PARENT = 0x300  # Span.flags: the parent is known to be remote


def the_two_exports(session_id: str) -> tuple[bytes, bytes]:
    """The gateway-facing server span and the agent span below it, each its own export."""
    trace, server = new_trace_id(), new_span_id()
    gateway = span("POST /chat", trace_id=trace, span_id=server, parent=os.urandom(8))
    gateway.flags = REMOTE_PARENT
    agent = span(
        "invoke_agent ops",
        trace_id=trace,
        parent=server,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "session.id": session_id,
            "input.value": "支付为什么 504？",
            "output.value": ANSWER,
        },
    )
    return export(gateway).SerializeToString(), export(agent).SerializeToString()


def sent(base: str, key: str, body: bytes) -> int:
    request = urllib.request.Request(
        f"{base}/v1/traces",
        data=body,
        method="POST",
        headers={"Content-Type": PROTOBUF, "Authorization": f"Api-Key {key}"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status


def session_of(base: str, key: str, session_id: str) -> dict:
    request = urllib.request.Request(
        f"{base}/api/sessions/{session_id}", headers={"Authorization": f"Api-Key {key}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_a_gateway_span_and_its_agent_span_sent_at_once_complete_the_session_with_its_answer(
    service,
) -> None:
    base, key = service
    with ThreadPoolExecutor(max_workers=2) as pool:
        for pair in range(PAIRS):
            barrier = threading.Barrier(2)

            def send(body: bytes, barrier: threading.Barrier = barrier) -> int:
                barrier.wait(timeout=30)
                return sent(base, key, body)

            statuses = list(pool.map(send, the_two_exports(f"gateway-{pair}")))
            assert statuses == [200, 200]

    finished = [session_of(base, key, f"gateway-{pair}") for pair in range(PAIRS)]

    assert [(s["status"], s["answer"]) for s in finished] == [("SUCCESS", ANSWER)] * PAIRS
    wait_for(
        lambda: all(
            session_of(base, key, f"gateway-{pair}")["selfEvaluation"] is not None
            for pair in range(PAIRS)
        ),
        timeout=60,
        what="the worker to score every session",
    )
