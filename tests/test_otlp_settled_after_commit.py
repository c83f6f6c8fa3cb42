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
import time

import pytest
from django.utils import timezone

from diagnosis.models import DiagnosisSession, Span
from diagnosis.otlp_completion import completions_settled
from diagnosis.otlp_mapping import ANSWERED_BY_TRACE_ATTRIBUTE
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
    # As the server span's request left it: the root found, the answer not committed yet.
    DiagnosisSession.objects.filter(session_id=trace.hex()).update(
        status="SUCCESS", answer=None, finished_at=timezone.now()
    )
    gateway = Span.objects.get(span_id=server.hex())
    gateway.attributes[ANSWERED_BY_TRACE_ATTRIBUTE] = trace.hex()
    gateway.save()
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


def chat(trace: bytes, root: bytes, text: str, *, ends_ms: int, start: int):  # type: ignore[no-untyped-def]
    return span(
        "chat local-model",
        trace_id=trace,
        parent=root,
        start_ns=start,
        duration_ms=ends_ms,
        attributes={"gen_ai.operation.name": "chat", "output.value": text},
    )


def run_root(trace: bytes, root: bytes, session_id: str, *, start: int, **attributes):  # type: ignore[no-untyped-def]
    return span(
        "invoke_agent ops",
        trace_id=trace,
        span_id=root,
        start_ns=start,
        duration_ms=5000,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "session.id": session_id,
            **attributes,
        },
    )


def test_the_last_model_call_is_the_answer_whatever_order_the_calls_arrive_in(client, key):
    for order in ("first-then-final", "final-then-first"):
        trace, root, start = new_trace_id(), new_span_id(), time.time_ns()
        post(client, export(run_root(trace, root, order, start=start)), key=key)
        first = chat(trace, root, "让我查一下。", ends_ms=100, start=start)
        final = chat(trace, root, ANSWER, ends_ms=4000, start=start)
        for call in (first, final) if order == "first-then-final" else (final, first):
            assert post(client, export(call), key=key).status_code == 200

        assert DiagnosisSession.objects.get(session_id=order).answer == ANSWER


def test_a_session_completed_over_rest_keeps_its_completion_when_its_spans_arrive(
    client, key, make_client
):
    api = make_client("full")
    assert (
        api.post("/api/sessions", {"sessionId": "rest-1", "query": "q"}, format="json").status_code
        == 201
    )
    assert (
        api.post("/api/sessions/rest-1/complete", {"status": "FAILED"}, format="json").status_code
        == 200
    )
    trace, root, start = new_trace_id(), new_span_id(), time.time_ns()

    post(
        client,
        export(run_root(trace, root, "rest-1", start=start, **{"output.value": ANSWER})),
        key=key,
    )
    post(client, export(chat(trace, root, ANSWER, ends_ms=10, start=start)), key=key)

    session = DiagnosisSession.objects.get()
    assert (session.status, session.answer) == ("FAILED", None)


def test_a_later_run_of_the_conversation_does_not_answer_the_first(client, key):
    first, first_root, start = new_trace_id(), new_span_id(), time.time_ns()
    post(client, export(run_root(first, first_root, "conv", start=start)), key=key)
    assert DiagnosisSession.objects.get().answer is None
    later, later_root = new_trace_id(), new_span_id()

    post(
        client,
        export(run_root(later, later_root, "conv", start=start, **{"output.value": ANSWER})),
        key=key,
    )
    post(client, export(chat(later, later_root, ANSWER, ends_ms=10, start=start)), key=key)

    assert DiagnosisSession.objects.get().answer is None


def test_a_rated_session_keeps_the_answer_its_reader_rated(client, key):
    trace, root, start = new_trace_id(), new_span_id(), time.time_ns()
    post(client, export(run_root(trace, root, "rated", start=start)), key=key)
    DiagnosisSession.objects.update(feedback="not_useful", feedback_at=timezone.now())

    post(client, export(chat(trace, root, ANSWER, ends_ms=10, start=start)), key=key)

    assert DiagnosisSession.objects.get().answer is None


def test_a_root_that_completed_a_placeholder_does_not_answer_the_session_it_then_joins(client, key):
    trace, server = gateway_span_sent(client, key)
    # The server span's request completed the placeholder from the agent span's answer.
    DiagnosisSession.objects.filter(session_id=trace.hex()).update(
        status="SUCCESS", answer=ANSWER, finished_at=timezone.now()
    )
    gateway = Span.objects.get(span_id=server.hex())
    gateway.attributes[ANSWERED_BY_TRACE_ATTRIBUTE] = trace.hex()
    gateway.save()
    # The named session was completed over REST, without an answer, before any span.
    named = DiagnosisSessionFactory(session_id="rest-2", failed=True, answer=None)
    agent_span_as_the_other_request_left_it(named, trace, server)

    session = settled_as_the_later_request_does(trace)

    assert (session.session_id, session.status, session.answer) == ("rest-2", "FAILED", None)


def test_an_exporter_resending_spans_already_stored_settles_what_the_first_send_left(client, key):
    # The first send stored the agent span and then lost every race of its look at the
    # trace (it was answered 503): the exporter sends the same span again.
    trace, server = gateway_span_sent(client, key)
    named = DiagnosisSessionFactory(session_id="gw-3", query="")
    stored = stored_as_another_request_left_it(
        named, trace, name="invoke_agent ops", role="agent", parent=server, answer=ANSWER
    )
    resent = span(
        "invoke_agent ops",
        trace_id=trace,
        span_id=bytes.fromhex(stored.span_id),
        parent=server,
        attributes={"session.id": "gw-3", "output.value": ANSWER},
    )

    assert post(client, export(resent), key=key).status_code == 200

    session = DiagnosisSession.objects.get()
    assert (session.session_id, session.status, session.answer) == ("gw-3", "SUCCESS", ANSWER)
    assert Span.objects.count() == 2
