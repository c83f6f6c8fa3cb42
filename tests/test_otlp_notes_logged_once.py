"""POST /v1/traces: the notes about the spans a request stored (hints ignored, ...) are
logged as one WARNING for the request, with their count and the first few, however many
spans carry them: a batch of 4,096 tool spans with bad hints is one line, not thousands."""

import logging

import pytest

from tests.otlp import export, new_span_id, new_trace_id, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

pytestmark = pytest.mark.django_db

TOOL_SPANS = 400


def tool_with_bad_hints(trace: bytes, parent: bytes, span_id: bytes):  # type: ignore[no-untyped-def]
    return span(
        "execute_tool kb",
        trace_id=trace,
        span_id=span_id,
        parent=parent,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "kb",
            "diagnosis.tool.kind": "weird",
            "diagnosis.hit_count": -5,
        },
    )


def test_many_spans_stored_with_notes_are_logged_in_one_warning(client, key, caplog):
    trace, root = new_trace_id(), new_span_id()
    ids = [new_span_id() for _ in range(TOOL_SPANS)]
    tools = [tool_with_bad_hints(trace, root, span_id) for span_id in ids]

    with caplog.at_level(logging.WARNING, logger="diagnosis"):
        response = post(
            client, export(span("agent", trace_id=trace, span_id=root), *tools), key=key
        )

    assert response.status_code == 200, response.content
    assert response_of(response).partial_success.rejected_spans == 0
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    line = warnings[0].getMessage()
    assert str(2 * TOOL_SPANS) in line
    assert ids[0].hex() in line
    assert ids[-1].hex() not in line
    assert len(line) < 2_000
    assert warnings[0].span_id == ids[0].hex()
