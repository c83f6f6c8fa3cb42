"""Typed readers for settings that come from the environment.

Each reader returns the default when the variable is unset or empty and raises
ImproperlyConfigured on a value it cannot understand, so a typo fails at start-up
instead of silently running with a default.
"""

import os
import re

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str = "") -> str:
    value = os.environ.get(name, "")
    return value if value != "" else default


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value == "":
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of {sorted(_TRUE | _FALSE)}, got {value!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = os.environ.get(name, "").strip()
    if value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {number}")
    return number


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    if value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name, "")
    if value.strip() == "":
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_rate(name: str, default: str) -> str | None:
    """A DRF throttle rate such as "30/min"; None when the variable says "off"."""
    value = env_str(name, default).strip()
    if value.lower() == "off":
        return None
    if not re.fullmatch(r"\d+/(s|sec|m|min|h|hour|d|day)", value):
        raise ImproperlyConfigured(f'{name} must look like "{default}" or be "off", got {value!r}')
    return value


def env_json_list(name: str) -> list[str] | None:
    """A JSON list of strings; None when unset."""
    import json

    value = os.environ.get(name, "").strip()
    if value == "":
        return None
    try:
        items = json.loads(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a JSON list of strings") from None
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ImproperlyConfigured(f"{name} must be a JSON list of strings")
    return items
