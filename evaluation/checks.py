"""System checks for the task-queue settings scoring relies on."""

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
