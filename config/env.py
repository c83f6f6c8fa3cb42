"""Typed readers for settings that come from the environment.

Each reader ignores the spaces around a value, and returns the default when the variable
is unset, empty or only spaces. A value it cannot understand is noted as a problem naming
the variable, and the default stands in for it while the other settings are read:
config/settings.py ends with raise_problems(), which stops start-up with
ImproperlyConfigured naming every bad variable, one line each, not only the first of them
per restart. A setting that depends on a bad one asks refused() and adds no problem of its
own; so does a rule between settings (require()). What a rule says, and what a reader
says of a number or a URL, comes from config/settings_rules.py, which the system checks
ask too. No message echoes a value that may be a secret, nor more than the first
SHOWN_CHARACTERS of a long one.
"""

import contextlib
import ipaddress
import math
import os
import re
import sys
import tempfile
import zoneinfo
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from config.settings_rules import (
    REDIS_SCHEMES,
    absolute_path_problem,
    range_problem,
    redis_url_problem,
    scheme_problem,
)
from config.settings_rules import shown as _shown

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


def require(name: str, wrong: str | None, *, depends_on: Sequence[str] = ()) -> None:
    """A rule between settings: note what is `wrong` (a predicate's answer, None when
    nothing is) for `name`. Nothing is noted when `name` or a variable it depends on was
    refused already: its value stands for nothing, and the rule is judged once it is fixed."""
    if wrong and not any(refused(other) for other in (name, *depends_on)):
        problem(name, wrong)


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
    """The value without the spaces around it (a shell or a YAML file adds them easily and
    no setting of ours means them); the default when nothing else is left."""
    return os.environ.get(name, "").strip() or default


def env_bool(name: str, default: bool = False) -> bool:
    value = env_str(name).lower()
    if value == "":
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return _refuse(
        name, f"{name} must be one of {sorted(_TRUE | _FALSE)}, got {_shown(value)}", default
    )


N = TypeVar("N", int, float)


def _number(value: str, kind: type[N]) -> N | None:
    """int(value) or float(value), or None. ASCII only: both read the digits of other
    scripts too ("２", "٣"), which no one means in a setting."""
    if not value.isascii():
        return None
    try:
        return kind(value)
    except ValueError:
        return None


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    value = env_str(name)
    if value == "":
        return default
    number = _number(value, int)
    if number is None:
        return _refuse(name, f"{name} must be an integer, got {_shown(value)}", default)
    wrong = range_problem(name, number, minimum, maximum)
    return _refuse(name, wrong, default) if wrong else number


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    value = env_str(name)
    if value == "":
        return default
    number = _number(value, float)
    if number is None:
        return _refuse(name, f"{name} must be a number, got {_shown(value)}", default)
    # float() reads "nan" and "inf" too; no setting of ours means either, and nan slips
    # through every comparison (a range check included).
    if not math.isfinite(number):
        return _refuse(name, f"{name} must be a finite number, got {_shown(value)}", default)
    wrong = range_problem(name, number, minimum, maximum)
    return _refuse(name, wrong, default) if wrong else number


def env_time_zone(name: str, default: str) -> str:
    """An IANA time zone name ("UTC", "Asia/Shanghai")."""
    value = env_str(name, default)
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        # OSError: the name of a directory of zones ("Asia"), or one too long for a file.
        return _refuse(
            name,
            f'{name} must be a time zone name such as "UTC" or "Asia/Shanghai", '
            f"got {_shown(value)}",
            default,
        )
    return value


def env_choice(name: str, default: str, choices: Sequence[str]) -> str:
    """One of `choices`, in any case ("debug" for "DEBUG"); returned as spelt in `choices`."""
    value = env_str(name, default)
    for choice in choices:
        if value.lower() == choice.lower():
            return choice
    return _refuse(
        name, f"{name} must be one of {', '.join(choices)}, got {_shown(value)}", default
    )


def env_list(name: str, default: list[str]) -> list[str]:
    value = env_str(name)
    if value == "":
        return list(default)
    items = [item.strip() for item in value.split(",") if item.strip()]
    if not items:
        # " , " is no empty value (that takes the default) but a list gone wrong.
        problem(name, f"{name} lists nothing (only commas and blanks): unset it or name items")
        return list(default)
    return items


def env_networks(
    name: str, default: list[str]
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Addresses or networks, comma-separated ("10.0.0.0/8,::1"). Every entry that is
    neither is named, not only the first; the default's networks stand in for them."""
    networks, wrong = [], []
    for item in env_list(name, default):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            wrong.append(_shown(item))
    if wrong:
        problem(
            name, f"{name} must list IPv4 or IPv6 addresses or networks, got {', '.join(wrong)}"
        )
        return [ipaddress.ip_network(item) for item in default]
    return networks


def _origin_problem(origin: str, *, wildcards: bool) -> str | None:
    """What keeps `origin` from being scheme://host[:port] (with `wildcards`, a host may
    start with "*."), or None."""
    if "://" not in origin:
        return "no scheme"
    try:
        parts = urlsplit(origin)
    except ValueError:  # an unclosed "[" of an IPv6 address, say
        return "not a URL"
    if not parts.scheme:
        return "no scheme"
    if not parts.netloc:
        return "no host"
    for part in ("path", "query", "fragment"):
        if getattr(parts, part):
            return f"a {part}"
    if "*" in parts.netloc and not (wildcards and parts.netloc.startswith("*.")):
        return "a wildcard: list each origin"
    return None


def env_origins(name: str, *, special: Sequence[str] = (), wildcards: bool = False) -> list[str]:
    """Origins as browsers send them (scheme://host[:port], comma-separated), or one of
    `special` as it is; none by default. With `wildcards`, "https://*.example.com" stands
    for the subdomains (Django's CSRF_TRUSTED_ORIGINS reads it so; django-cors-headers
    compares origins as written and would never match it). An entry without a scheme or
    with a path equals no Origin a browser sends, and the system checks of Django
    (CSRF_TRUSTED_ORIGINS) and django-cors-headers (CORS_ALLOWED_ORIGINS) would refuse it
    only once the other variables are right: every such entry is named here, with what is
    wrong with it."""
    origins = env_list(name, [])
    wrong = []
    for origin in origins:
        what = None if origin in special else _origin_problem(origin, wildcards=wildcards)
        if what:
            wrong.append(f"{_shown(origin)} ({what})")
    if wrong:
        return _refuse(
            name, f"{name} must list origins as scheme://host[:port], got {', '.join(wrong)}", []
        )
    sent = (origin if origin in special else _origin_as_sent(origin) for origin in origins)
    return list(dict.fromkeys(sent))


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_as_sent(origin: str) -> str:
    """`origin` as a browser writes it in its Origin header: scheme and host in lower case,
    without the scheme's own port ("https://Page.Example:443" is "https://page.example");
    both libraries that read the list compare it with that header as written."""
    parts = urlsplit(origin)
    scheme, netloc = parts.scheme.lower(), parts.netloc.lower()
    port = f":{_DEFAULT_PORTS[scheme]}" if scheme in _DEFAULT_PORTS else None
    if port and netloc.endswith(port):
        netloc = netloc.removesuffix(port)
    return f"{scheme}://{netloc}"


def env_rate(name: str, default: str) -> str | None:
    """A DRF throttle rate such as "30/min"; None when the variable says "off"."""
    value = env_str(name, default)
    if value.lower() == "off":
        return None
    # [0-9], not \d: \d matches the digits of every script.
    if not re.fullmatch(r"[0-9]+/(s|sec|m|min|h|hour|d|day)", value):
        return _refuse(
            name, f'{name} must look like "{default}" or be "off", got {_shown(value)}', default
        )
    if not value.split("/")[0].strip("0"):
        return _refuse(
            name,
            f"{name} {value} would refuse every request: say off to turn the limit off",
            default,
        )
    return value


def env_token(name: str, *, least: int) -> str:
    """A shared secret a client sends (a scrape token): empty when unset, else at least
    `least` characters, so that it is no guess. Never shown, only its length."""
    value = env_str(name)
    if value and len(value) < least:
        return _refuse(name, f"{name} must be at least {least} characters, got {len(value)}", "")
    return value


def env_json_list(name: str) -> list[str] | None:
    """A JSON list of strings; None when unset."""
    import json

    value = env_str(name)
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
    compile stops start-up instead of the first request that needs it. Only the spaces
    around the list are dropped: those inside a pattern are part of it."""
    patterns = env_json_list(name)
    wrong = []
    for pattern in patterns or []:
        try:
            re.compile(pattern)
        except re.error as exc:
            wrong.append(f"{_shown(pattern)} is not a regular expression ({exc})")
    if wrong:
        return _refuse(name, f"{name}: {'; '.join(wrong)}", None)
    return patterns


def env_absolute_path(name: str, default: Path) -> Path:
    """An absolute path (config/settings_rules.py says why not a relative one)."""
    value = env_str(name)
    if value == "":
        return default
    wrong = absolute_path_problem(name, value)
    return _refuse(name, wrong, default) if wrong else Path(value)


def env_url(name: str, *, schemes: Sequence[str]) -> str:
    """A URL whose scheme is one of `schemes` (lower case), or "" when unset. The URL is
    never echoed: it may hold a password."""
    url = env_str(name)
    wrong = url and scheme_problem(name, url, schemes)
    return _refuse(name, wrong, "") if wrong else url


def env_save_limit(name: str) -> int:
    """django-q2's save_limit: -1 keeps no successful task, a positive number that many;
    django-q2 reads 0 as every task, for ever (a table that grows without end)."""
    number = env_int(name, -1, minimum=-1)
    if number == 0:
        return _refuse(
            name,
            f"{name} 0 would keep every successful task for ever (django-q2 reads 0 so): "
            "-1 keeps none, a positive number keeps that many",
            -1,
        )
    return number


def env_redis_url(name: str) -> str:
    """A URL redis-py can read (config/settings_rules.py), or "" when unset; never echoed."""
    url = env_url(name, schemes=REDIS_SCHEMES)
    wrong = url and redis_url_problem(name, url)
    return _refuse(name, wrong, "") if wrong else url


def env_database(name: str, default: str, *, schemes: tuple[str, ...], conn_max_age: int) -> dict:
    """Django's settings for the database at the URL in `name` (dj_database_url), when its
    scheme is one of `schemes` (the databases the service runs on): another one
    (postgres://) is refused here, by name, not by Django failing to import its driver.
    The URL itself is never echoed: it may hold a password. A refused URL is noted and the
    default's database stands in for it."""
    import dj_database_url

    url = env_str(name, default)
    wrong = scheme_problem(name, url, schemes)
    if wrong:
        problem(name, wrong)
        url = default
    try:
        parsed = dj_database_url.parse(url, conn_max_age=conn_max_age, conn_health_checks=True)
        if parsed["ENGINE"].endswith("mysql") and not (parsed.get("NAME") or "").strip("/ "):
            problem(name, f"{name} names no database (its path: mysql://user@host:3306/name)")
        return parsed
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
    wrong = absolute_path_problem(name, value)
    if wrong:
        return _refuse(name, wrong, "")
    directory = Path(value)
    shown = _shown(value)
    try:
        directory.mkdir(exist_ok=True)
    except FileNotFoundError as exc:
        if directory.parent.is_dir():  # /proc, say: no directory can be made there
            return _refuse(name, f"{name} {shown} cannot be made ({exc.strerror})", "")
        return _refuse(
            name, f"{name} {shown}: its parent {_shown(str(directory.parent))} does not exist", ""
        )
    except FileExistsError:
        return _refuse(name, f"{name} {shown} is a file, not a directory", "")
    except OSError as exc:
        return _refuse(name, f"{name} {shown} cannot be made ({exc.strerror})", "")
    try:
        # A file made and dropped at once: os.access() says yes to root on /proc, say.
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return _refuse(
            name,
            f"{name} {shown} cannot be written ({exc.strerror}): every web and worker "
            "process writes its metrics there",
            "",
        )
    return value
