"""An agent behind a traced gateway whose two spans came in requests committed at once:
the gateway-facing server span (parent remote) in one, the `invoke_agent` span below it
(the session's name and the answer) in the other. Neither saw the other's span before it
committed, so neither found the root; or the server span's request found it but read the
answer before the agent span was committed. Each request looks again once committed
(`completions_settled`, after `placeholders_joined`): the later of the two completes the
session with its answer. SQLite runs one writer at a time and cannot interleave two
requests: these tests build what the pair leaves committed and run the check the later
one runs (tests/test_otlp_gateway_race_http.py sends the pair at once to gunicorn)."""

import os

import pytest
from django.utils import timezone

from diagnosis.models import DiagnosisSession, Span
from diagnosis.otlp_completion import completions_settled
from diagnosis.otlp_placeholders import placeholders_joined
from tests.factories import DiagnosisSessionFactory
from tests.otlp import (
    export,
    new_span_id,
    new_trace_id,
    post,
    span,
    stored_as_another_request_left_it,
)
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

ANSWER = "payment 上游超时：扩容 payment 并调大 proxy_read_timeout。"


def gateway_span_sent(client, key: str) -> tuple[bytes, bytes]:  # type: ignore[no-untyped-def]
    """The server span alone, through the endpoint: stored under the trace id, no root."""
    trace, server = new_trace_id(), new_span_id()
    gateway = span("POST /chat", trace_id=trace, span_id=server, parent=os.urandom(8))
    gateway.flags = 0x300  # the parent is remote
    assert post(client, export(gateway), key=key).status_code == 200
    assert DiagnosisSession.objects.get(session_id=trace.hex()).status == "RUNNING"
    return trace, server


def agent_span_as_the_other_request_left_it(session: DiagnosisSession, trace, parent) -> None:  # type: ignore[no-untyped-def]
    stored_as_another_request_left_it(
        session, trace, name="invoke_agent ops", role="agent", parent=parent, answer=ANSWER
    )


def settled_as_the_later_request_does(trace: bytes) -> DiagnosisSession:
    placeholders_joined({trace.hex()})
    completions_settled({trace.hex()})
    return DiagnosisSession.objects.get()


def test_when_neither_request_found_the_root_the_later_completes_the_session_with_its_answer(
    client, key
):
    trace, server = gateway_span_sent(client, key)
    named = DiagnosisSessionFactory(session_id="gw-1", query="")
    agent_span_as_the_other_request_left_it(named, trace, server)

    session = settled_as_the_later_request_does(trace)

    assert (session.session_id, session.status, session.answer) == ("gw-1", "SUCCESS", ANSWER)
    assert session.finished_at is not None
    assert Span.objects.filter(session=session).count() == 2


def test_a_placeholder_completed_before_the_answer_was_committed_gets_it_once_joined(client, key):
    trace, server = gateway_span_sent(client, key)
    DiagnosisSession.objects.filter(session_id=trace.hex()).update(
        status="SUCCESS", answer=None, finished_at=timezone.now()
    )
    named = DiagnosisSessionFactory(session_id="gw-2", query="")
    agent_span_as_the_other_request_left_it(named, trace, server)

    session = settled_as_the_later_request_does(trace)

    assert (session.session_id, session.status, session.answer) == ("gw-2", "SUCCESS", ANSWER)


def test_a_trace_without_its_root_yet_leaves_its_session_running(client, key):
    trace, _ = gateway_span_sent(client, key)

    assert completions_settled({trace.hex()}) == set()

    assert DiagnosisSession.objects.get().status == "RUNNING"


def test_a_model_call_exported_after_the_root_gives_the_session_its_answer(client, key):
    trace, root = new_trace_id(), new_span_id()
    run = span("invoke_agent ops", trace_id=trace, span_id=root, attributes={"session.id": "w"})
    post(client, export(run), key=key)
    assert DiagnosisSession.objects.get().answer is None
    chat = span(
        "chat local-model",
        trace_id=trace,
        parent=root,
        attributes={"gen_ai.operation.name": "chat", "output.value": ANSWER},
    )

    assert post(client, export(chat), key=key).status_code == 200

    session = DiagnosisSession.objects.get()
    assert (session.status, session.answer) == ("SUCCESS", ANSWER)


def test_a_session_completed_with_its_answer_keeps_it_when_a_later_call_says_otherwise(client, key):
    trace, root = new_trace_id(), new_span_id()
    run = span(
        "invoke_agent ops",
        trace_id=trace,
        span_id=root,
        attributes={"session.id": "w2", "output.value": ANSWER},
    )
    post(client, export(run), key=key)
    chat = span(
        "chat local-model",
        trace_id=trace,
        parent=root,
        attributes={"gen_ai.operation.name": "chat", "output.value": "另一个回答"},
    )

    post(client, export(chat), key=key)

    assert DiagnosisSession.objects.get().answer == ANSWER
