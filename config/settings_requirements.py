"""The rules between settings (config/settings_rules.py judges them), noted for start-up
as config/env.py notes a bad variable: config/settings.py calls these once it has read
the variables a rule joins."""

from config.env import require
from config.settings_rules import (
    lock_wait_problem,
    openai_setting_problem,
    opinion_calls_problem,
    task_timeout_problem,
)


def require_task_timeout_below_retry(*, timeout: int, retry: int) -> None:
    require("Q_TIMEOUT", task_timeout_problem(timeout=timeout, retry=retry), depends_on=["Q_RETRY"])


def require_lock_wait_below_read_timeout(*, lock_wait: int, read_timeout: int) -> None:
    require(
        "DB_LOCK_WAIT_TIMEOUT",
        lock_wait_problem(lock_wait=lock_wait, read_timeout=read_timeout),
        depends_on=["DB_READ_TIMEOUT"],
    )


def require_openai_opinions(base_url: str, model: str) -> None:
    """What the openai opinion provider needs: an endpoint and a model."""
    for name, value in (("OPINION_BASE_URL", base_url), ("OPINION_MODEL", model)):
        require(name, openai_setting_problem(name, value))


def require_opinion_calls_within_task(timeout: float, max_retries: int, retry: int) -> None:
    """An opinion call and its retries end before the worker kills the opinion task."""
    require(
        "OPINION_TIMEOUT",
        opinion_calls_problem(timeout=timeout, max_retries=max_retries, retry=retry),
        depends_on=["OPINION_MAX_RETRIES", "Q_TIMEOUT", "Q_RETRY"],
    )
