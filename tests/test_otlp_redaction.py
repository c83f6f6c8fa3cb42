"""Secrets and personal data in spans are replaced before anything is written."""

import json

import pytest
from django.db import connection
from django.test import Client

from diagnosis.redaction import REDACTED, redactor
from tests.otlp import export, new_span_id, new_trace_id, post, span

pytestmark = pytest.mark.django_db

SECRETS = {
    "password": "hunter2-Zq9",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMifQ.c2lnbmF0dXJlLXNpZw",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "openai": "sk-proj-abcdefghijklmnop1234",
    "email": "zhang.wei@example.com",
    "phone": "13812345678",
    "private_key": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
}


def every_text_in_the_database() -> str:
    """Every cell of every table, as text."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in cursor.fetchall():
                chunks.append(" ".join(str(cell) for cell in row))
    return "\n".join(chunks)


def test_a_secret_in_a_tool_argument_is_nowhere_in_the_database(make_client):
    key = make_client("agent").raw_key
    arguments = json.dumps(
        {
            "query": "login fails",
            "password": SECRETS["password"],
            "headers": {"Authorization": f"Bearer {SECRETS['bearer']}"},
            "aws_key": SECRETS["aws"],
            "llm_key": SECRETS["openai"],
            "reporter": SECRETS["email"],
            "phone": SECRETS["phone"],
            "pem": "-----BEGIN PRIVATE KEY-----\n"
            f"{SECRETS['private_key']}\n-----END PRIVATE KEY-----",
        }
    )
    trace_id, root = new_trace_id(), new_span_id()
    spans = [
        span(
            "invoke_agent agent",
            trace_id=trace_id,
            span_id=root,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "session.id": "secret-run",
                "final_result": f"Mail {SECRETS['email']} or call {SECRETS['phone']}.",
                "pydantic_ai.all_messages": json.dumps(
                    [{"role": "user", "content": f"my password={SECRETS['password']}"}]
                ),
            },
        ),
        span(
            "execute_tool search_docs",
            trace_id=trace_id,
            parent=root,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_docs",
                "gen_ai.tool.call.arguments": arguments,
                "gen_ai.tool.call.result": f"token={SECRETS['openai']}",
            },
            error=f"auth failed for {SECRETS['email']}",
        ),
    ]

    response = post(Client(), export(*spans), key=key)

    assert response.status_code == 200
    dump = every_text_in_the_database()
    assert "login fails" in dump  # the rest of the argument is kept
    assert REDACTED in dump
    for name, secret in SECRETS.items():
        assert secret not in dump, name


def test_the_patterns_are_settable_per_deployment(settings):
    settings.REDACT_PATTERNS_EXTRA = [r"EMP-\d{6}"]

    assert redactor()("employee EMP-123456 asked") == f"employee {REDACTED} asked"


def test_a_keyed_secret_keeps_its_key(settings):
    assert redactor()('{"password": "abc123"}') == f'{{"password": "{REDACTED}"}}'
