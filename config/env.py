"""Typed readers for settings that come from the environment.

Each reader returns the default when the variable is unset or empty and raises
ImproperlyConfigured on a value it cannot understand, so a typo fails at start-up
instead of silently running with a default.
"""

import math
import os
import re
import tempfile
import zoneinfo
from collections.abc import Sequence
from pathlib import Path

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


def _in_range(name: str, number: float, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name} must be <= {maximum}, got {number}")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    value = os.environ.get(name, "").strip()
    if value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None
    _in_range(name, number, minimum, maximum)
    return number


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    value = os.environ.get(name, "").strip()
    if value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}") from None
    # float() reads "nan" and "inf" too; no setting of ours means either, and nan slips
    # through every comparison (a range check included).
    if not math.isfinite(number):
        raise ImproperlyConfigured(f"{name} must be a finite number, got {value!r}")
    _in_range(name, number, minimum, maximum)
    return number


def env_time_zone(name: str, default: str) -> str:
    """An IANA time zone name ("UTC", "Asia/Shanghai")."""
    value = env_str(name, default).strip()
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ImproperlyConfigured(
            f'{name} must be a time zone name such as "UTC" or "Asia/Shanghai", got {value!r}'
        ) from None
    return value


def env_choice(name: str, default: str, choices: Sequence[str]) -> str:
    """One of `choices`, in any case ("debug" for "DEBUG"); returned as spelt in `choices`."""
    value = env_str(name, default).strip()
    for choice in choices:
        if value.lower() == choice.lower():
            return choice
    raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")


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


def env_regex_list(name: str) -> list[str] | None:
    """A JSON list of regular expressions, each compiled here: a pattern that does not
    compile stops start-up instead of the first request that needs it."""
    patterns = env_json_list(name)
    for pattern in patterns or []:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ImproperlyConfigured(
                f"{name}: {pattern!r} is not a regular expression ({exc})"
            ) from None
    return patterns


def env_database_url(url: str, *, schemes: tuple[str, ...]) -> str:
    """`url` when its scheme is one of `schemes` (the databases the service runs on):
    another one (postgres://) is refused here, by name, not by Django failing to import
    its driver. The URL itself is never echoed: it may hold a password."""
    scheme, separator, _rest = url.strip().partition("://")
    scheme = scheme.lower() if separator else ""
    if scheme not in schemes:
        raise ImproperlyConfigured(
            f"DATABASE_URL must use one of the schemes {', '.join(schemes)}, got {scheme!r}"
        )
    return url


def env_metrics_dir(name: str) -> str:
    """prometheus_client's multi-process directory, which it reads from the environment
    itself and writes to as soon as the first metric is made, before any command runs.
    Its documentation wants it to exist, empty, when the service starts: a missing one is
    made (new, so empty: the usual case after a reboot cleared /run) inside a parent that
    exists; a deeper mistake (a missing parent, a file, no write access) is refused. An
    existing one is not emptied: a process cannot tell a stale file from a live
    neighbour's (docs/operations.md, "Metrics")."""
    value = env_str(name)
    if not value:
        return value
    directory = Path(value)
    try:
        directory.mkdir(exist_ok=True)
    except FileNotFoundError:
        raise ImproperlyConfigured(
            f"{name} {value!r}: its parent {str(directory.parent)!r} does not exist"
        ) from None
    except FileExistsError:
        raise ImproperlyConfigured(f"{name} {value!r} is a file, not a directory") from None
    except OSError as exc:
        raise ImproperlyConfigured(f"{name} {value!r} cannot be made ({exc.strerror})") from None
    try:
        # A file made and dropped at once: os.access() says yes to root on /proc, say.
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise ImproperlyConfigured(
            f"{name} {value!r} cannot be written ({exc.strerror}): every web and worker "
            "process writes its metrics there"
        ) from None
    return value
