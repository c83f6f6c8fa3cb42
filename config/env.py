"""Typed readers for settings that come from the environment.

Each reader returns the default when the variable is unset or empty. A value it cannot
understand is noted as a problem naming the variable, and the default stands in for it
while the other settings are read: config/settings.py ends with raise_problems(), which
stops start-up with ImproperlyConfigured naming every bad variable, one line each, not
only the first of them per restart. A setting that depends on a bad one asks refused()
and adds no problem of its own. No message echoes a value that may be a secret.
"""

import contextlib
import math
import os
import re
import sys
import tempfile
import zoneinfo
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

T = TypeVar("T")

# Variable -> what is wrong with it, in the order the settings read them.
_problems: dict[str, str] = {}


def problem(name: str, message: str) -> None:
    """Note that the variable `name` cannot be right; `message` says why and what is accepted."""
    _problems.setdefault(name, message)


def refused(name: str) -> bool:
    """Whether the variable `name` had a problem noted: its value stands for nothing."""
    return name in _problems


def raise_problems() -> None:
    """Raise ImproperlyConfigured with every problem noted so far, one a line, and forget
    them (manage.py reads the settings a second time after a failed first read)."""
    messages = list(_problems.values())
    _problems.clear()
    if messages:
        raise ImproperlyConfigured("\n".join(messages))


@contextlib.contextmanager
def exit_on_configuration_error() -> Iterator[None]:
    """End the process when the settings cannot be used: each problem on its own line of
    stderr ("Configuration error: ..."), then exit status 1. Someone starting the service
    needs the lines; a traceback through the import machinery only hides them."""
    try:
        yield
    except ImproperlyConfigured as exc:
        lines = str(exc).splitlines() or ["ImproperlyConfigured"]
        sys.exit("\n".join(f"Configuration error: {line}" for line in lines))


def _refuse(name: str, message: str, default: T) -> T:
    problem(name, message)
    return default


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
    return _refuse(name, f"{name} must be one of {sorted(_TRUE | _FALSE)}, got {value!r}", default)


def _out_of_range(
    name: str, number: float, minimum: float | None, maximum: float | None
) -> str | None:
    if minimum is not None and number < minimum:
        return f"{name} must be >= {minimum}, got {number}"
    if maximum is not None and number > maximum:
        return f"{name} must be <= {maximum}, got {number}"
    return None


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    value = os.environ.get(name, "").strip()
    if value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        return _refuse(name, f"{name} must be an integer, got {value!r}", default)
    wrong = _out_of_range(name, number, minimum, maximum)
    return _refuse(name, wrong, default) if wrong else number


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    value = os.environ.get(name, "").strip()
    if value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        return _refuse(name, f"{name} must be a number, got {value!r}", default)
    # float() reads "nan" and "inf" too; no setting of ours means either, and nan slips
    # through every comparison (a range check included).
    if not math.isfinite(number):
        return _refuse(name, f"{name} must be a finite number, got {value!r}", default)
    wrong = _out_of_range(name, number, minimum, maximum)
    return _refuse(name, wrong, default) if wrong else number


def env_time_zone(name: str, default: str) -> str:
    """An IANA time zone name ("UTC", "Asia/Shanghai")."""
    value = env_str(name, default).strip()
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return _refuse(
            name,
            f'{name} must be a time zone name such as "UTC" or "Asia/Shanghai", got {value!r}',
            default,
        )
    return value


def env_choice(name: str, default: str, choices: Sequence[str]) -> str:
    """One of `choices`, in any case ("debug" for "DEBUG"); returned as spelt in `choices`."""
    value = env_str(name, default).strip()
    for choice in choices:
        if value.lower() == choice.lower():
            return choice
    return _refuse(name, f"{name} must be one of {', '.join(choices)}, got {value!r}", default)


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
        return _refuse(
            name, f'{name} must look like "{default}" or be "off", got {value!r}', default
        )
    return value


def env_json_list(name: str) -> list[str] | None:
    """A JSON list of strings; None when unset."""
    import json

    value = os.environ.get(name, "").strip()
    if value == "":
        return None
    wrong = f"{name} must be a JSON list of strings"
    try:
        items = json.loads(value)
    except ValueError:
        return _refuse(name, wrong, None)
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        return _refuse(name, wrong, None)
    return items


def env_regex_list(name: str) -> list[str] | None:
    """A JSON list of regular expressions, each compiled here: a pattern that does not
    compile stops start-up instead of the first request that needs it."""
    patterns = env_json_list(name)
    for pattern in patterns or []:
        try:
            re.compile(pattern)
        except re.error as exc:
            return _refuse(name, f"{name}: {pattern!r} is not a regular expression ({exc})", None)
    return patterns


def env_database(name: str, default: str, *, schemes: tuple[str, ...], conn_max_age: int) -> dict:
    """Django's settings for the database at the URL in `name` (dj_database_url), when its
    scheme is one of `schemes` (the databases the service runs on): another one
    (postgres://) is refused here, by name, not by Django failing to import its driver.
    The URL itself is never echoed: it may hold a password. A refused URL is noted and the
    default's database stands in for it."""
    import dj_database_url

    url = env_str(name, default)
    scheme, separator, _rest = url.strip().partition("://")
    scheme = scheme.lower() if separator else ""
    if scheme not in schemes:
        problem(name, f"{name} must use one of the schemes {', '.join(schemes)}, got {scheme!r}")
        url = default
    try:
        return dj_database_url.parse(url, conn_max_age=conn_max_age, conn_health_checks=True)
    except (ValueError, dj_database_url.UnknownSchemeError) as exc:
        # dj_database_url says what is wrong in general terms, never with the URL's parts.
        problem(name, f"{name} is not understood: {exc}")
    return dj_database_url.parse(default, conn_max_age=conn_max_age, conn_health_checks=True)


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
        return _refuse(
            name, f"{name} {value!r}: its parent {str(directory.parent)!r} does not exist", ""
        )
    except FileExistsError:
        return _refuse(name, f"{name} {value!r} is a file, not a directory", "")
    except OSError as exc:
        return _refuse(name, f"{name} {value!r} cannot be made ({exc.strerror})", "")
    try:
        # A file made and dropped at once: os.access() says yes to root on /proc, say.
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return _refuse(
            name,
            f"{name} {value!r} cannot be written ({exc.strerror}): every web and worker "
            "process writes its metrics there",
            "",
        )
    return value
