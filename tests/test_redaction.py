"""What redaction replaces in a text taken from a trace, and what it leaves alone."""

import pytest
from django.test import Client

from diagnosis.models import DiagnosisSession
from diagnosis.redaction import REDACTED, redactor
from tests.otlp import export, new_span_id, new_trace_id, post, span


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("mysql://root:s3cret@10.0.0.1/x", f"mysql://root:{REDACTED}@10.0.0.1/x"),
        (
            "connect postgres://app:pw-9@db.example.com:5432/orders failed",
            f"connect postgres://app:{REDACTED}@db.example.com:5432/orders failed",
        ),
        ("REDIS_URL=redis://:hunter2@cache:6379/0", f"REDIS_URL=redis://:{REDACTED}@cache:6379/0"),
        (
            "https://deploy:p@ss@git.example.com/x.git",
            f"https://deploy:{REDACTED}@git.example.com/x.git",
        ),
    ],
)
def test_the_password_in_a_url_is_redacted_and_the_host_kept(text: str, redacted: str) -> None:
    assert redactor()(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "GET http://order-service:8080/api/orders?page=2",
        "https://docs.example.com/guide#section:2",
        "jdbc:mysql://db.example.com:3306/orders",
    ],
)
def test_a_url_without_credentials_is_left_alone(text: str) -> None:
    assert redactor()(text) == text


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("secret_key_base=9f2c1e", f"secret_key_base={REDACTED}"),
        ("SECRET_KEY=django-insecure-abc", f"SECRET_KEY={REDACTED}"),
        ('{"secret_key_base": "9f2c1e"}', f'{{"secret_key_base": "{REDACTED}"}}'),
        ("secrets: s3", f"secrets: {REDACTED}"),
        ("app_secret=abc", f"app_secret={REDACTED}"),
    ],
)
def test_a_key_naming_a_secret_has_its_value_redacted(text: str, redacted: str) -> None:
    assert redactor()(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        '{"max_tokens": 1024, "prompt_tokens": 12, "completion_tokens": 40}',
        "secretary=Alice",
    ],
)
def test_keys_that_only_look_like_secret_words_keep_their_values(text: str) -> None:
    assert redactor()(text) == text


@pytest.mark.django_db
def test_a_user_id_that_is_an_email_address_is_stored_as_sent(make_client) -> None:
    key = make_client("agent").raw_key
    request = export(
        span(
            "invoke_agent agent",
            trace_id=new_trace_id(),
            span_id=new_span_id(),
            attributes={"session.id": "by-mail", "user.id": "li.wei@corp.example.com"},
        )
    )

    response = post(Client(), request, key=key)

    assert response.status_code == 200
    session = DiagnosisSession.objects.get(session_id="by-mail")
    assert session.user_id == "li.wei@corp.example.com"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ('export SECRET_KEY_BASE="abc def"', f'export SECRET_KEY_BASE="{REDACTED}"'),
        ('password="correct horse battery"', f'password="{REDACTED}"'),
        ('api_key: "sk live 123"', f'api_key: "{REDACTED}"'),
        ("password='correct horse battery'", f"password='{REDACTED}'"),
        ('{"password": "a b c"}', f'{{"password": "{REDACTED}"}}'),
        ('password="it\'s mine"', f'password="{REDACTED}"'),
        ('{"token": "a \\" b"}', f'{{"token": "{REDACTED}"}}'),
        # A value cut off before its closing quote is redacted to the end of the line.
        ('password="correct horse batt', f'password="{REDACTED}'),
    ],
    ids=["export", "double", "yaml", "single", "json", "other-quote", "escaped", "unclosed"],
)
def test_a_quoted_secret_value_is_redacted_whole(text: str, redacted: str) -> None:
    assert redactor()(text) == redacted


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (
            'login password="a b" user="li wei" ok',
            f'login password="{REDACTED}" user="li wei" ok',
        ),
        ('{"password": "a b", "user": "li"}', f'{{"password": "{REDACTED}", "user": "li"}}'),
        (
            "password='x y'\nnext line with spaces",
            f"password='{REDACTED}'\nnext line with spaces",
        ),
    ],
    ids=["line", "json", "next-line"],
)
def test_the_text_after_a_quoted_secrets_closing_quote_is_kept(text: str, redacted: str) -> None:
    assert redactor()(text) == redacted


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("password=abc def", f"password={REDACTED} def"),
        ("token=abc,next=1", f"token={REDACTED},next=1"),
        ('password=""', 'password=""'),
    ],
)
def test_an_unquoted_secret_value_ends_at_the_first_space_or_separator(
    text: str, redacted: str
) -> None:
    assert redactor()(text) == redacted


@pytest.mark.parametrize(
    "text",
    [
        'user="li wei" note="a b c"',
        '{"query": "disk full on db-1", "max_tokens": 1024}',
        "message='connection reset by peer'",
    ],
)
def test_quoted_values_of_other_keys_are_left_alone(text: str) -> None:
    assert redactor()(text) == text


@pytest.mark.parametrize(
    "text",
    ["ssh://git@github.com:22/a.git", "clone https://deploy@git.example.com/x.git failed"],
)
def test_the_user_in_a_urls_authority_is_not_taken_for_an_email_address(text: str) -> None:
    assert redactor()(text) == text


def test_an_email_address_after_a_colon_is_still_redacted() -> None:
    assert redactor()("mailto:li.wei@corp.example.com") == f"mailto:{REDACTED}"
