"""POST /v1/traces: tool arguments sent as JSON with their non-ASCII characters escaped (the
OpenAI Agents SDK's `{"query": "order-service \\u62a5 504\\uff0c..."}`) are stored with those
characters as themselves, when that is the same document written alike (json.dumps's
spacing, default or compact); any other text is stored as sent. Redaction reads the
characters as themselves, so a secret written in escapes is no way past it."""

import json

import pytest

from diagnosis.models import Span, ToolInvocation
from tests.otlp import agent_run, export, new_trace_id, post, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)
from tests.test_otlp_redaction import every_text_in_the_database

pytestmark = pytest.mark.django_db

QUERY = "order-service 报 504，连接池耗尽？"


def run_with_arguments(arguments: str, *, under: str = "input.value"):  # type: ignore[no-untyped-def]
    """The tool span of search_docs, called with `arguments` (under the attribute
    `under`), in an agent's run."""
    tool = {
        "openinference.span.kind": "TOOL",
        under: arguments,
        "output.value": "Doc 1: ERR-5041 runbook",
    }
    return agent_run("arguments-1", tool)


def stored_query(client, key, arguments: str, **where) -> str:  # type: ignore[no-untyped-def]
    post(client, run_with_arguments(arguments, **where), key=key)
    return ToolInvocation.objects.get().query


def test_escaped_arguments_are_stored_with_their_chinese_characters(client, key):
    sent = json.dumps({"query": QUERY, "top_k": 3})
    assert "\\u62a5" in sent

    query = stored_query(client, key, sent)

    assert query == json.dumps({"query": QUERY, "top_k": 3}, ensure_ascii=False)
    assert "报 504，连接池耗尽" in query


def test_the_tool_span_keeps_the_same_arguments_as_the_invocation(client, key):
    query = stored_query(client, key, json.dumps({"query": QUERY}))

    stored = Span.objects.get(name="search_docs")
    assert stored.attributes["input.value"] == query


def test_escaped_arguments_under_the_gen_ai_key_read_alike(client, key):
    sent = json.dumps({"query": QUERY})

    query = stored_query(client, key, sent, under="gen_ai.tool.call.arguments")

    assert query == json.dumps({"query": QUERY}, ensure_ascii=False)


def test_compact_escaped_arguments_stay_compact(client, key):
    sent = json.dumps({"query": QUERY, "filters": {"env": "生产"}}, separators=(",", ":"))

    query = stored_query(client, key, sent)

    assert query == '{"query":"order-service 报 504，连接池耗尽？","filters":{"env":"生产"}}'


def test_arguments_spaced_otherwise_keep_their_escapes(client, key):
    sent = '{ "query" : "order-service \\u62a5 504" }'

    assert stored_query(client, key, sent) == sent


def test_arguments_with_an_escaped_ascii_character_keep_their_escapes(client, key):
    sent = '{"query": "\\u0041PI \\u62a5 504"}'

    assert stored_query(client, key, sent) == sent


def test_arguments_that_are_no_json_are_stored_as_sent(client, key):
    sent = "order-service \\u62a5 504"

    assert stored_query(client, key, sent) == sent


def test_arguments_without_escapes_are_stored_as_sent(client, key):
    sent = json.dumps({"query": QUERY}, ensure_ascii=False, indent=2)

    assert stored_query(client, key, sent) == sent


def test_an_emoji_written_as_a_surrogate_pair_becomes_the_character(client, key):
    sent = json.dumps({"query": "告警 😀"})
    assert "\\ud83d\\ude00" in sent

    assert stored_query(client, key, sent) == '{"query": "告警 😀"}'


def test_control_characters_stay_escaped_as_json_writes_them(client, key):
    sent = json.dumps({"query": "报警\n\u0001\t504"})

    assert stored_query(client, key, sent) == '{"query": "报警\\n\\u0001\\t504"}'


def test_a_lone_surrogate_keeps_its_escape(client, key):
    sent = '{"query": "\\u62a5 \\ud83d"}'

    assert stored_query(client, key, sent) == sent


def test_a_secret_written_in_escapes_is_redacted(client, key):
    phone, aws = "13912345678", "AKIAIOSFODNN7EXAMPLE"
    sent = json.dumps({"query": f"手机{phone} 密钥 {aws}", "password": "猎户座-Zq9"})

    query = stored_query(client, key, sent)

    assert query == '{"query": "手机[redacted] 密钥 [redacted]", "password": "[redacted]"}'
    everything = every_text_in_the_database()
    assert phone not in everything
    assert aws not in everything
    assert "\\u624b\\u673a" + phone not in everything


def test_escaped_arguments_past_the_limit_are_cut_as_written_with_their_characters(
    client, key, settings
):
    settings.OTLP_MAX_ATTRIBUTE_CHARS = 64
    words = "连接池耗尽" * 20
    sent = json.dumps({"query": words})

    query = stored_query(client, key, sent)

    assert query == json.dumps({"query": words}, ensure_ascii=False)[:64]
    stored = Span.objects.get(name="search_docs")
    assert stored.attributes["diagnosis.truncated"] == ["input.value"]


def test_escaped_arguments_that_fit_once_written_as_characters_are_not_cut(client, key, settings):
    settings.OTLP_MAX_ATTRIBUTE_CHARS = 64
    sent = json.dumps({"query": "连接池耗尽" * 3})
    assert len(sent) > 64

    query = stored_query(client, key, sent)

    assert query == json.dumps({"query": "连接池耗尽" * 3}, ensure_ascii=False)
    stored = Span.objects.get(name="search_docs")
    assert "diagnosis.truncated" not in stored.attributes


def test_a_secret_written_in_escapes_in_a_tool_result_is_redacted_too(client, key):
    phone = "13912345678"
    trace = new_trace_id()
    result = json.dumps({"documents": [f"联系人手机{phone}"]})
    body = export(
        span(
            "search_docs",
            trace_id=trace,
            attributes={
                "openinference.span.kind": "RETRIEVER",
                "tool.name": "search_docs",
                "session.id": "result-1",
                "output.value": result,
            },
        )
    )

    post(client, body, key=key)

    assert phone not in every_text_in_the_database()
    assert "联系人手机[redacted]" in Span.objects.get().attributes["output.value"]
