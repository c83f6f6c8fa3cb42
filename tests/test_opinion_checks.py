"""The system checks report opinion-layer settings that code set wrong (evaluation.checks);
the same mistakes in the environment stop start-up (tests/test_settings_rules.py), in the
same words."""

import pytest

from evaluation.checks import opinion_settings


def ids(settings) -> list[str]:  # type: ignore[no-untyped-def]
    return [problem.id for problem in opinion_settings()]


@pytest.fixture
def openai(settings):  # type: ignore[no-untyped-def]
    settings.OPINION_PROVIDER = "openai"
    settings.OPINION_BASE_URL = "http://llm.internal:8000/v1"
    settings.OPINION_MODEL = "qwen2.5-7b-instruct"
    settings.OPINION_API_KEY = "sk-x"
    settings.OPINION_TIMEOUT = 15.0
    settings.OPINION_MAX_RETRIES = 2
    settings.OPINION_DAILY_BUDGET = 1000
    return settings


@pytest.mark.parametrize("provider", ["heuristic", "off"])
def test_the_embedded_providers_need_nothing_else(settings, provider) -> None:
    settings.OPINION_PROVIDER = provider
    settings.OPINION_DAILY_BUDGET = 0  # only the openai provider spends a budget

    assert ids(settings) == []


def test_an_unknown_provider_is_an_error(settings) -> None:
    settings.OPINION_PROVIDER = "gpt"

    assert ids(settings) == ["evaluation.E003"]


def test_a_complete_openai_configuration_passes(openai) -> None:
    assert ids(openai) == []


def test_openai_without_base_url_or_model_is_an_error(openai) -> None:
    openai.OPINION_BASE_URL = ""
    openai.OPINION_MODEL = ""

    assert ids(openai) == ["evaluation.E004", "evaluation.E004"]


def test_a_base_url_that_is_not_http_is_an_error(openai) -> None:
    openai.OPINION_BASE_URL = "llm.internal:8000"

    assert ids(openai) == ["evaluation.E005"]


@pytest.mark.parametrize("budget", [0, -5])
def test_a_budget_that_is_not_positive_is_an_error(openai, budget) -> None:
    openai.OPINION_DAILY_BUDGET = budget

    assert ids(openai) == ["evaluation.E006"]


def test_a_timeout_that_is_not_positive_is_an_error(openai) -> None:
    openai.OPINION_TIMEOUT = 0

    assert ids(openai) == ["evaluation.E007"]


def test_retries_that_outlast_the_task_are_an_error(openai) -> None:
    openai.OPINION_TIMEOUT = 30.0  # x 3 tries = 90 s, against the task's 59 s

    assert ids(openai) == ["evaluation.E008"]


def test_an_empty_key_is_only_a_warning(openai) -> None:
    openai.OPINION_API_KEY = ""

    assert ids(openai) == ["evaluation.W002"]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("OPINION_MODEL", "", "OPINION_MODEL must be set when OPINION_PROVIDER is openai"),
        (
            "OPINION_BASE_URL",
            "llm.internal:8000/v1",
            "OPINION_BASE_URL must use one of the schemes http, https, got no scheme",
        ),
        ("OPINION_DAILY_BUDGET", 0, "OPINION_DAILY_BUDGET must be >= 1, got 0"),
        ("OPINION_MAX_RETRIES", -1, "OPINION_MAX_RETRIES must be >= 0, got -1"),
        # Below the floor start-up holds OPINION_TIMEOUT to, though positive.
        ("OPINION_TIMEOUT", 0.05, "OPINION_TIMEOUT must be >= 0.1, got 0.05"),
        (
            "OPINION_TIMEOUT",
            30.0,
            "OPINION_TIMEOUT x (OPINION_MAX_RETRIES + 1) = 90s must be under the opinion "
            "task's 59s (Q_RETRY - 1): lower OPINION_TIMEOUT or OPINION_MAX_RETRIES",
        ),
    ],
)
def test_a_mistake_set_in_code_reads_as_start_up_says_it_of_the_environment(
    openai, name, value, message
) -> None:
    setattr(openai, name, value)

    assert [problem.msg for problem in opinion_settings()] == [message]


def test_opinion_calls_are_not_judged_against_a_task_timeout_that_is_itself_wrong(openai) -> None:
    openai.Q_CLUSTER = {**openai.Q_CLUSTER, "timeout": 90, "retry": 60}
    openai.OPINION_TIMEOUT = 30.0

    assert ids(openai) == []
