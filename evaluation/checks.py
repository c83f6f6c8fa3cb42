"""System checks for the task-queue and opinion settings scoring relies on.

Read from the environment, these settings are judged by config/settings.py itself: a bad
variable stops start-up with the others, before any check runs (config/env.py). These
checks judge the settings as they finally are, so they still speak when code sets them
(a test's override, a settings module that imports config.settings and changes them):
`manage.py check`, `runserver` and `qcluster` run them before they start, and so does
gunicorn (config/gunicorn.conf.py) before it serves. Both ask config/settings_rules.py,
so a mistake reads the same at start-up and here.
"""

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register

from config.settings_rules import (
    OPINION_LEAST,
    OPINION_URL_SCHEMES,
    openai_setting_problem,
    opinion_calls_problem,
    range_problem,
    scheme_problem,
    task_timeout_problem,
)


@register()
def task_queue_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    q = settings.Q_CLUSTER
    problems: list[CheckMessage] = []
    wrong = task_timeout_problem(timeout=q.get("timeout"), retry=q.get("retry"))
    if wrong:
        problems.append(
            Error(wrong, hint="Q_CLUSTER holds them as timeout and retry.", id="evaluation.E001")
        )
    if not q.get("max_attempts"):
        problems.append(
            Error(
                "Q_CLUSTER max_attempts must be a positive number.",
                hint="0 redelivers a failing task forever (Q_MAX_ATTEMPTS).",
                id="evaluation.E002",
            )
        )
    if q.get("workers") == 1:
        problems.append(
            Warning(
                "Q_WORKERS is 1: the case indexer holds a worker in 20-second turns, so a "
                "session's scoring may wait up to 20 s for it",
                hint="Set Q_WORKERS to 2 or more, unless other qcluster nodes share the queue.",
                id="evaluation.W003",
            )
        )
    return problems


@register(deploy=True)
def task_queue_not_inline(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if not settings.Q_CLUSTER.get("sync"):
        return []
    return [
        Warning(
            "Q_SYNC runs tasks inside the web request instead of on qcluster workers.",
            hint="Only for tests; unset Q_SYNC in production.",
            id="evaluation.W001",
        )
    ]


@register()
def opinion_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The opinion layer's settings (OPINION_*). Scoring goes on whatever these say; a bad
    provider setting only means no opinions, and the task that failed to form one."""
    from evaluation.services import PROVIDER_OPENAI, PROVIDERS

    provider = settings.OPINION_PROVIDER
    problems: list[CheckMessage] = []
    if provider not in PROVIDERS:
        problems.append(
            Error(
                f"OPINION_PROVIDER must be one of {', '.join(PROVIDERS)}, got {provider!r}.",
                hint="heuristic is the embedded default; off forms no opinions.",
                id="evaluation.E003",
            )
        )
        return problems
    if provider != PROVIDER_OPENAI:
        return problems
    for name in ("OPINION_BASE_URL", "OPINION_MODEL"):
        wrong = openai_setting_problem(name, getattr(settings, name))
        if wrong:
            hint = "The OpenAI-compatible endpoint (…/v1) and the model to ask."
            problems.append(Error(wrong, hint=hint, id="evaluation.E004"))
    base_url = settings.OPINION_BASE_URL
    wrong = base_url and scheme_problem("OPINION_BASE_URL", base_url, OPINION_URL_SCHEMES)
    if wrong:
        problems.append(Error(wrong, id="evaluation.E005"))
    budget = "OPINION_DAILY_BUDGET"
    wrong = range_problem(budget, settings.OPINION_DAILY_BUDGET, OPINION_LEAST[budget])
    if wrong:
        hint = "To stop paid calls, set OPINION_PROVIDER=heuristic or off."
        problems.append(Error(wrong, hint=hint, id="evaluation.E006"))
    calls = [
        range_problem(name, getattr(settings, name), OPINION_LEAST[name])
        for name in ("OPINION_TIMEOUT", "OPINION_MAX_RETRIES")
    ]
    problems += [Error(wrong, id="evaluation.E007") for wrong in calls if wrong]
    q = settings.Q_CLUSTER
    # As at start-up: calls are weighed against the task's time once that time is right.
    if not any(calls) and not task_timeout_problem(timeout=q.get("timeout"), retry=q.get("retry")):
        wrong = opinion_calls_problem(
            timeout=settings.OPINION_TIMEOUT,
            max_retries=settings.OPINION_MAX_RETRIES,
            retry=q["retry"],
        )
        if wrong:
            hint = "The worker would kill the call midway."
            problems.append(Error(wrong, hint=hint, id="evaluation.E008"))
    if not settings.OPINION_API_KEY:
        problems.append(
            Warning(
                "OPINION_API_KEY is empty: requests go without a key.",
                hint="Fine for a private endpoint that needs none.",
                id="evaluation.W002",
            )
        )
    return problems
