"""Redaction at its edges (an scp-style address, a secret in JSON inside a JSON string, a
number that only looks like a mobile number) and how a tool span's hit-count hint that is
no plausible count is quoted back to the exporter."""

import json
import re

import pytest

from diagnosis.models import Span, ToolInvocation
from diagnosis.redaction import REDACTED, redactor
from tests.otlp import export, new_span_id, new_trace_id, post, response_of, span
from tests.otlp_fixtures import otlp_agent_key, otlp_committing_client  # noqa: F401 (key, client)

# --- An scp-style address holds no secret -------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "git@github.com:org/repo.git",
        "git clone git@github.com:org/repo.git failed",
        "git@gitlab.example.com:group/sub/project.git",
        "deploy@10.0.0.5:/srv/app",
        "rsync -a dist/ deploy@web-1.example.com:/srv/app",
        "scp build.tar deploy@ci.example.com:~/releases/",
    ],
)
def test_an_scp_style_address_is_left_alone(text: str) -> None:
    assert redactor()(text) == text


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("li.wei@corp.example.com", REDACTED),
        ("mail li.wei@corp.example.com: mailbox full", f"mail {REDACTED}: mailbox full"),
        ("to:li.wei@corp.example.com,cc:x", f"to:{REDACTED},cc:x"),
        ('{"email": "li.wei@corp.example.com"}', f'{{"email": "{REDACTED}"}}'),
        ("li.wei@corp.example.com:hunter2", f"{REDACTED}:hunter2"),
    ],
    ids=["alone", "colon-then-space", "between-colons", "json", "colon-no-path"],
)
def test_an_email_address_next_to_a_colon_is_still_redacted(text: str, redacted: str) -> None:
    assert redactor()(text) == redacted


# --- A secret in JSON inside a JSON string -------------------------------------------


def test_the_double_escaped_example_keeps_its_escaping() -> None:
    text = '"{\\"config\\": \\"{\\\\\\"api_key\\\\\\": \\\\\\"sk-live-abcdef0123456789\\\\\\"}\\"}"'

    redacted = redactor()(text)

    config = json.loads(json.loads(redacted))["config"]
    assert json.loads(config) == {"api_key": REDACTED}


@pytest.mark.parametrize("secret", ["correct horse battery", 'it said "no"', "x\\y"])
@pytest.mark.parametrize("levels", [1, 2, 3])
def test_a_secret_in_json_escaped_once_or_more_is_redacted_and_the_rest_kept(
    levels: int, secret: str
) -> None:
    text = json.dumps({"password": secret, "user": "li wei"})
    for _ in range(levels):
        text = json.dumps({"config": text, "note": "a b"})

    redacted = redactor()(text)

    inner = json.loads(redacted)
    for _ in range(levels):
        assert inner["note"] == "a b"
        inner = json.loads(inner["config"])
    assert inner == {"password": REDACTED, "user": "li wei"}


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ('{\\"api_key\\": \\"abc def\\"}', f'{{\\"api_key\\": \\"{REDACTED}\\"}}'),
        ("{\\'token\\': \\'abc def\\'}", f"{{\\'token\\': \\'{REDACTED}\\'}}"),
        ('\\"secret_key_base\\": 9f2c1e,', f'\\"secret_key_base\\": {REDACTED},'),
        ('{\\"password\\": \\"\\"}', '{\\"password\\": \\"\\"}'),
        ('{\\"password\\": \\"abc', f'{{\\"password\\": \\"{REDACTED}'),
    ],
    ids=["double-quotes", "single-quotes", "unquoted", "empty", "cut-off"],
)
def test_an_escaped_key_names_a_secret_like_a_plain_one(text: str, redacted: str) -> None:
    assert redactor()(text) == redacted


# --- Only a standalone 11-digit number is a mobile number -----------------------------


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("手机 13912345678", f"手机 {REDACTED}"),
        ("手机13912345678", f"手机{REDACTED}"),
        ("tel:13912345678", f"tel:{REDACTED}"),
        ('{"phone": "13912345678"}', f'{{"phone": "{REDACTED}"}}'),
        ("call 13912345678.", f"call {REDACTED}."),
        ("(13912345678)", f"({REDACTED})"),
        ("+86 13912345678", REDACTED),
        ("+86-13912345678", REDACTED),
        ("8613912345678", REDACTED),
        ("+86 139 1234 5678", REDACTED),
        ("联系人-13912345678", f"联系人-{REDACTED}"),
    ],
)
def test_a_mobile_number_is_redacted(text: str, redacted: str) -> None:
    assert redactor()(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "order-13912345678901",
        "order-13912345678",
        "13912345678-2",
        "ORD13912345678",
        "id_13912345678",
        "13912345678abc",
        "trace 9f2c13912345678ab0e4",
        "ts 1733412345678",
        '{"ts": 1733412345678}',
        "score 0.13912345678",
        "13912345678.5",
        "123139123456789",
    ],
)
def test_an_11_digit_run_inside_something_else_is_left_alone(text: str) -> None:
    assert redactor()(text) == text


# --- A hit-count hint that is no plausible count is quoted readably -----------------


def a_tool_run(hits: object) -> tuple[list, bytes]:
    trace_id, root, tool_id = new_trace_id(), new_span_id(), new_span_id()
    spans = [
        span("invoke_agent", trace_id=trace_id, span_id=root, attributes={"session.id": "s"}),
        span(
            "execute_tool kb",
            trace_id=trace_id,
            span_id=tool_id,
            parent=root,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "kb",
                "gen_ai.tool.call.result": '["E1234", "E5678"]',
                "diagnosis.tool.kind": "retrieval",
                "diagnosis.hit_count": hits,
            },
        ),
    ]
    return spans, tool_id


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("hits", "quoted"),
    [(1e300, "1e+300"), (2.0**40, "1099511627776.0"), (-5.0, "-5.0"), ("9" * 5000, "'999")],
    ids=["1e300", "2**40-double", "negative-double", "5000-digits"],
)
def test_a_hit_count_hint_past_any_count_is_ignored_and_quoted_short(
    client, key, hits: object, quoted: str
) -> None:
    spans, tool_id = a_tool_run(hits)

    response = post(client, export(*spans), key=key)

    assert response.status_code == 200, response.content
    note = response_of(response).partial_success.error_message
    assert tool_id.hex() in note and "diagnosis.hit_count" in note
    assert quoted in note
    assert not re.search(r"\d{41}", note)
    assert len(note) < 300
    fact = ToolInvocation.objects.get()
    assert (fact.kind, fact.match_level, fact.hit_count) == ("retrieval", "L1", 2)


def test_a_url_password_after_a_long_dotted_text_is_still_redacted() -> None:
    text = "a." * 20_000 + " mysql://root:hunter2@db:3306/x"

    assert redactor()(text).endswith(f" mysql://root:{REDACTED}@db:3306/x")


@pytest.mark.django_db
def test_a_secret_the_cut_goes_through_is_not_stored_in_part(client, key, settings) -> None:
    settings.OTLP_MAX_ATTRIBUTE_CHARS = 100
    trace = new_trace_id()
    value = "x" * 95 + " AKIAABCDEFGHIJKLMNOP and " + "a." * 500_000
    tool = span(
        "execute_tool kb",
        trace_id=trace,
        attributes={"gen_ai.operation.name": "execute_tool", "output.value": value},
    )

    assert post(client, export(tool), key=key).status_code == 200

    stored = Span.objects.get(trace_id=trace.hex())
    assert stored.attributes["output.value"].startswith("x" * 95)
    assert "AKIA" not in stored.attributes["output.value"]
    assert len(stored.attributes["output.value"]) == 100
    assert stored.truncated
