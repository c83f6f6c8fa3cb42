"""Settings that cannot work together, or with what the service talks to (the opinion
provider, the task queue, Redis), stop start-up with the other bad variables, one line
each: not a system check that only speaks once they are fixed, nor a 500 on every request."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from evaluation.checks import task_queue_settings
from evaluation.services import PROVIDERS
from tests.test_settings import load_settings, refusal

OPENAI = {
    "OPINION_PROVIDER": "openai",
    "OPINION_BASE_URL": "http://llm.internal:8000/v1",
    "OPINION_MODEL": "qwen2.5-7b-instruct",
}


def test_an_unknown_opinion_provider_is_named_beside_the_other_bad_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert refusal(monkeypatch, OPINION_PROVIDER="bogus", Q_POLL="nan") == [
        "Q_POLL must be a finite number, got 'nan'",
        f"OPINION_PROVIDER must be one of {', '.join(PROVIDERS)}, got 'bogus'",
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_opinion_provider_the_service_has_is_taken_in_any_case(
    monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    env = {**OPENAI, "OPINION_PROVIDER": f" {provider.upper()} "}

    assert load_settings(monkeypatch, DEBUG="1", **env)["OPINION_PROVIDER"] == provider


def test_the_openai_provider_without_its_endpoint_and_model_names_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert refusal(monkeypatch, OPINION_PROVIDER="openai") == [
        "OPINION_BASE_URL must be set when OPINION_PROVIDER is openai",
        "OPINION_MODEL must be set when OPINION_PROVIDER is openai",
    ]


def test_an_opinion_endpoint_that_is_not_http_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = refusal(monkeypatch, **{**OPENAI, "OPINION_BASE_URL": "llm.internal:8000/v1"})

    assert lines == ["OPINION_BASE_URL must use one of the schemes http, https, got no scheme"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("OPINION_DAILY_BUDGET", "0", "OPINION_DAILY_BUDGET must be >= 1, got 0"),
        ("OPINION_MAX_RETRIES", "-1", "OPINION_MAX_RETRIES must be >= 0, got -1"),
        ("OPINION_TIMEOUT", "0", "OPINION_TIMEOUT must be >= 0.1, got 0.0"),
    ],
)
def test_an_opinion_budget_retries_or_timeout_below_its_floor_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    assert refusal(monkeypatch, **{**OPENAI, name: value}) == [message]


def test_opinion_calls_that_outlast_the_opinion_task_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = refusal(monkeypatch, **OPENAI, OPINION_TIMEOUT="30", OPINION_MAX_RETRIES="2")

    assert lines == [
        "OPINION_TIMEOUT x (OPINION_MAX_RETRIES + 1) = 90s must be under the opinion task's "
        "59s (Q_RETRY - 1): lower OPINION_TIMEOUT or OPINION_MAX_RETRIES"
    ]
    # A longer Q_RETRY gives the task the time.
    loaded = load_settings(
        monkeypatch, DEBUG="1", **OPENAI, OPINION_TIMEOUT="30", Q_TIMEOUT="60", Q_RETRY="120"
    )
    assert loaded["OPINION_TIMEOUT"] == 30.0


def test_a_complete_openai_configuration_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", **OPENAI)

    assert (loaded["OPINION_PROVIDER"], loaded["OPINION_MODEL"]) == (
        "openai",
        OPENAI["OPINION_MODEL"],
    )


@pytest.mark.parametrize(("timeout", "retry"), [("60", "60"), ("90", "60")])
def test_a_task_timeout_not_below_the_retry_names_both_variables(
    monkeypatch: pytest.MonkeyPatch, timeout: str, retry: str
) -> None:
    assert refusal(monkeypatch, Q_TIMEOUT=timeout, Q_RETRY=retry) == [
        f"Q_TIMEOUT ({timeout}) must be lower than Q_RETRY ({retry}): a task still running "
        "when it is delivered again would run twice at once"
    ]


def test_a_bad_q_retry_is_named_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    assert refusal(monkeypatch, Q_TIMEOUT="90", Q_RETRY="soon") == [
        "Q_RETRY must be an integer, got 'soon'"
    ]


@pytest.mark.parametrize("name", ["REDIS_URL", "Q_REDIS_URL"])
@pytest.mark.parametrize(
    ("url", "got"),
    [
        ("127.0.0.1:6379", "no scheme"),
        ("localhost:6379", "no scheme"),
        ("notaurl", "no scheme"),
        (":s3cret@cache.internal:6379/0", "no scheme"),
        ("http://:s3cret@cache.internal:6379/0", "'http'"),
    ],
)
def test_a_redis_url_without_a_redis_scheme_is_refused_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, name: str, url: str, got: str
) -> None:
    (line,) = refusal(monkeypatch, **{name: url})

    assert line == f"{name} must use one of the schemes redis, rediss, unix, got {got}"
    assert "s3cret" not in line and "6379" not in line


@pytest.mark.parametrize(
    "url",
    ["redis://:s3cret@cache.internal:6379/0", "rediss://cache.internal", "unix:///run/r.sock"],
)
def test_a_redis_url_of_each_scheme_redis_reads_is_taken(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", REDIS_URL=url, Q_REDIS_URL=url)

    assert loaded["CACHES"]["default"]["LOCATION"] == url
    assert loaded["Q_CLUSTER"]["redis"] == url


@pytest.mark.parametrize("name", ["REDIS_URL", "Q_REDIS_URL"])
@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("redis://:s3cret@[cache", "Invalid IPv6 URL"),
        (
            "redis://:s3cret@127.0.0.1:notaport/0",
            "Port could not be cast to integer value as 'notaport'",
        ),
        ("rediss://:s3cret@cache.internal:99999/0", "Port out of range 0-65535"),
        (
            "redis://:s3cret@127.0.0.1:6379/0?socket_timeout=soon",
            "Invalid value for 'socket_timeout' in connection URL.",
        ),
        ("redis://:s3cret@127.0.0.1:6379/cache", "the path is the database's number, such as /0"),
    ],
    ids=[
        "a broken host",
        "a port that is no number",
        "a port too large",
        "a bad option",
        "a named database",
    ],
)
def test_a_redis_url_redis_cannot_read_is_refused_at_start_up_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, name: str, url: str, what: str
) -> None:
    # Its scheme is right: it passed start-up, and then every API request (which reads the
    # cache) answered 500, or the worker died with a traceback.
    (line,) = refusal(monkeypatch, **{name: url})

    assert line == f"{name} is no URL Redis can be reached at: {what}"
    assert "s3cret" not in line


@pytest.mark.parametrize("key", ["", " ", "\t \n"])
def test_a_secret_key_of_spaces_is_not_set(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(monkeypatch, DEBUG="0", SECRET_KEY=key)

    assert str(refused.value) == "SECRET_KEY must be set when DEBUG is off."


@pytest.mark.parametrize(("timeout", "retry"), [(60, 60), (90, 60)])
def test_a_task_timeout_set_in_code_is_refused_by_the_checks_in_the_words_of_start_up(
    monkeypatch: pytest.MonkeyPatch, settings, timeout: int, retry: int
) -> None:
    (line,) = refusal(monkeypatch, Q_TIMEOUT=str(timeout), Q_RETRY=str(retry))
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": timeout, "retry": retry}

    assert [(problem.id, problem.msg) for problem in task_queue_settings()] == [
        ("evaluation.E001", line)
    ]


def test_a_task_queue_without_a_timeout_is_refused_by_the_checks(settings) -> None:
    settings.Q_CLUSTER = {key: v for key, v in settings.Q_CLUSTER.items() if key != "timeout"}

    assert [problem.msg for problem in task_queue_settings()] == [
        "Q_TIMEOUT (unset) must be lower than Q_RETRY (60): a task still running when it is "
        "delivered again would run twice at once"
    ]


@pytest.mark.parametrize(
    ("value", "line"),
    [
        (
            "0",
            "Q_SAVE_LIMIT 0 would keep every successful task for ever (django-q2 reads 0 so): "
            "-1 keeps none, a positive number keeps that many",
        ),
        ("-7", "Q_SAVE_LIMIT must be >= -1, got -7"),
    ],
)
def test_a_save_limit_that_keeps_every_task_or_means_nothing_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str, line: str
) -> None:
    assert refusal(monkeypatch, Q_SAVE_LIMIT=value) == [line]


@pytest.mark.parametrize(("value", "kept"), [("-1", -1), ("200", 200)])
def test_a_save_limit_of_none_or_some_tasks_is_taken(
    monkeypatch: pytest.MonkeyPatch, value: str, kept: int
) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", Q_SAVE_LIMIT=value)

    assert loaded["Q_CLUSTER"]["save_limit"] == kept


def test_a_single_worker_is_warned_of_the_case_indexer_holding_it(settings) -> None:
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "workers": 1}

    (warning,) = task_queue_settings()

    assert warning.id == "evaluation.W003"
    assert warning.msg == (
        "Q_WORKERS is 1: the case indexer holds a worker in 20-second turns, so a session's "
        "scoring may wait up to 20 s for it"
    )


def test_two_workers_are_not_warned_of(settings) -> None:
    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "workers": 2}

    assert task_queue_settings() == []
