"""System checks for the task-queue and opinion settings scoring relies on.

Read from the environment, these settings are judged by config/settings.py itself: a bad
variable stops start-up with the others, before any check runs (config/env.py). These
checks judge the settings as they finally are, so they still speak when code sets them
(a test's override, a settings module that imports config.settings and changes them):
`manage.py check`, `runserver` and `qcluster` run them before they start, and so does
gunicorn (config/gunicorn.conf.py) before it serves.
"""

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register


@register()
def task_queue_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    q = settings.Q_CLUSTER
    problems: list[CheckMessage] = []
    if q.get("timeout") is None or q.get("retry") is None or q["timeout"] >= q["retry"]:
        problems.append(
            Error(
                "Q_CLUSTER timeout must be set and lower than retry.",
                hint=(
                    "Otherwise a slow task is delivered again while it still runs "
                    "(Q_TIMEOUT, Q_RETRY)."
                ),
                id="evaluation.E001",
            )
        )
    if not q.get("max_attempts"):
        problems.append(
            Error(
                "Q_CLUSTER max_attempts must be a positive number.",
                hint="0 redelivers a failing task forever (Q_MAX_ATTEMPTS).",
                id="evaluation.E002",
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
        if not getattr(settings, name):
            problems.append(
                Error(
                    f"{name} must be set when OPINION_PROVIDER is openai.",
                    hint="The OpenAI-compatible endpoint (…/v1) and the model to ask.",
                    id="evaluation.E004",
                )
            )
    base_url = settings.OPINION_BASE_URL
    if base_url and not base_url.startswith(("http://", "https://")):
        problems.append(
            Error(
                "OPINION_BASE_URL must be an http:// or https:// URL.",
                id="evaluation.E005",
            )
        )
    if settings.OPINION_DAILY_BUDGET <= 0:
        problems.append(
            Error(
                "OPINION_DAILY_BUDGET must be a positive number of calls per day.",
                hint="To stop paid calls, set OPINION_PROVIDER=heuristic or off.",
                id="evaluation.E006",
            )
        )
    if settings.OPINION_TIMEOUT <= 0 or settings.OPINION_MAX_RETRIES < 0:
        problems.append(
            Error(
                "OPINION_TIMEOUT must be positive and OPINION_MAX_RETRIES not negative.",
                id="evaluation.E007",
            )
        )
    else:
        from evaluation.services import opinion_task_timeout

        worst = settings.OPINION_TIMEOUT * (settings.OPINION_MAX_RETRIES + 1)
        if worst >= opinion_task_timeout():
            problems.append(
                Error(
                    f"OPINION_TIMEOUT x (OPINION_MAX_RETRIES + 1) = {worst:g}s does not fit "
                    f"in the opinion task's {opinion_task_timeout()}s (Q_RETRY - 1).",
                    hint="The worker would kill the call midway; lower the timeout or retries.",
                    id="evaluation.E008",
                )
            )
    if not settings.OPINION_API_KEY:
        problems.append(
            Warning(
                "OPINION_API_KEY is empty: requests go without a key.",
                hint="Fine for a private endpoint that needs none.",
                id="evaluation.W002",
            )
        )
    return problems
