"""What some settings must be, each said once, for both places that judge them.

config/env.py judges the variables as config/settings.py reads them, and stops start-up
with every problem at once; the system checks (evaluation/checks.py) judge the settings as
they finally are, code's changes included. Both ask the functions here, so a mistake reads
the same wherever it is found. Each takes plain values and returns what is wrong, as the
line someone reads, or None: no Django, no settings, no state.
"""

import os
import re
from collections.abc import Sequence
from urllib.parse import parse_qs, urlsplit

# The schemes redis-py reads: another one passes start-up and fails every request.
REDIS_SCHEMES = ("redis", "rediss", "unix")
# Who forms the opinion stored beside the rule score (evaluation/services.py):
# embedded, an OpenAI-compatible endpoint, or nobody.
OPINION_PROVIDERS = ("heuristic", "openai", "off")
# The openai opinion provider's endpoint (OPINION_BASE_URL).
OPINION_URL_SCHEMES = ("http", "https")
# The least each of these opinion settings may be (a budget of 0 is no way to stop paid
# calls: OPINION_PROVIDER heuristic or off is).
OPINION_LEAST = {"OPINION_TIMEOUT": 0.1, "OPINION_MAX_RETRIES": 0, "OPINION_DAILY_BUDGET": 1}

# A message shows this many characters of a value at most: a value pasted by mistake (a
# whole file, say) would otherwise fill the terminal on one line.
SHOWN_CHARACTERS = 60


def shown(value: str, *, quoted: bool = True) -> str:
    """`value` as a message shows it: quoted, cut after its first SHOWN_CHARACTERS."""
    if len(value) <= SHOWN_CHARACTERS:
        return repr(value) if quoted else value
    start = value[:SHOWN_CHARACTERS]
    return f"{repr(start) if quoted else start}… ({len(value)} characters)"


def range_problem(
    name: str, number: float, minimum: float | None = None, maximum: float | None = None
) -> str | None:
    """`number` below `minimum` or above `maximum`."""
    got = shown(str(number), quoted=False)
    if minimum is not None and number < minimum:
        return f"{name} must be >= {minimum}, got {got}"
    if maximum is not None and number > maximum:
        return f"{name} must be <= {maximum}, got {got}"
    return None


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def scheme_problem(name: str, url: str, schemes: Sequence[str]) -> str | None:
    """The scheme of `url` is not one of `schemes` (lower case). The message names the
    scheme only: the rest of the URL may hold a password."""
    scheme, separator, _rest = url.partition("://")
    if not (separator and _SCHEME.fullmatch(scheme)):
        # No scheme ("127.0.0.1:6379"), or something before "://" that is not one and
        # may be anything ("user:password@host").
        got = "no scheme"
    elif scheme.lower() in schemes:
        return None
    else:
        got = shown(scheme.lower())
    return f"{name} must use one of the schemes {', '.join(schemes)}, got {got}"


def redis_url_problem(name: str, url: str) -> str | None:
    """What keeps redis-py (the cache's and the task queue's client) from reading `url`, a
    URL of one of REDIS_SCHEMES, or from reading it as meant: its host and port as urllib
    reads them (redis-py does), its database a number (redis-py reads another path as
    database 0), its numeric options numbers. Read here without redis-py, which costs a
    process 10 MB where the cache is never used (an export); no reason holds the password."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (reading it checks it)
    except ValueError as exc:
        return f"{name} is no URL Redis can be reached at: {shown(str(exc), quoted=False)}"
    path = parts.path.strip("/")
    if parts.scheme.lower() != "unix" and path and not path.isdigit():
        what = "the path is the database's number, such as /0"
        return f"{name} is no URL Redis can be reached at: {what}"
    for option, values in parse_qs(parts.query).items():
        read = _REDIS_NUMBER_OPTIONS.get(option)
        try:
            if read is not None:
                read(values[0])
        except ValueError:
            what = f"Invalid value for {shown(option)} in connection URL."
            return f"{name} is no URL Redis can be reached at: {what}"
    return None


# The options of a Redis URL that redis-py reads as numbers (redis/connection.py).
_REDIS_NUMBER_OPTIONS = {
    "db": int,
    "socket_timeout": float,
    "socket_connect_timeout": float,
    "socket_read_size": int,
    "max_connections": int,
    "health_check_interval": int,
    "timeout": float,
    "protocol": int,
}


# Django's own rule for a key it calls weak (django.core.checks.security.base, W009), which
# is only a warning there: with DEBUG off the key signs sessions, CSRF tokens, the admin's
# login cookie and the feedback tokens, so a weak one stops start-up.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE_CHARACTERS = 5
SECRET_KEY_INSECURE_PREFIX = "django-insecure-"  # noqa: S105 (a prefix, no key)


def secret_key_problem(key: str) -> str | None:
    """What makes `key` weak by Django's rule, its length or count of different characters
    (never the key itself), or None."""
    got = _secret_key_weakness(key)
    if got is None:
        return None
    return (
        f"SECRET_KEY must be {_STRONG_KEY} when DEBUG is off, got {got}: "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))' makes one"
    )


_STRONG_KEY = (
    f"at least {SECRET_KEY_MIN_LENGTH} characters with at least "
    f"{SECRET_KEY_MIN_UNIQUE_CHARACTERS} different ones"
)


def _secret_key_weakness(key: str) -> str | None:
    if key.startswith(SECRET_KEY_INSECURE_PREFIX):
        return "Django's start-project key (django-insecure-…)"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"{len(key)} characters"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return f"{len(set(key))} different characters"
    return None


def secret_key_fallbacks_problem(
    fallbacks: Sequence[str], *, secret_key: str | None, strong: bool
) -> str | None:
    """What is wrong with the keys SECRET_KEY had before (SECRET_KEY_FALLBACKS), each
    named by its position, never shown: weak by SECRET_KEY's rule when `strong` (DEBUG
    off), or SECRET_KEY itself (None when SECRET_KEY is not to be compared)."""
    faults = []
    for position, key in enumerate(fallbacks, start=1):
        if secret_key is not None and key == secret_key:
            faults.append(f"entry {position}: SECRET_KEY itself")
        elif strong and (weakness := _secret_key_weakness(key)):
            faults.append(f"entry {position}: {weakness}")
    if not faults:
        return None
    return (
        "SECRET_KEY_FALLBACKS must list the keys SECRET_KEY had before, each "
        f"{_STRONG_KEY} when DEBUG is off, got {'; '.join(faults)}"
    )


def absolute_path_problem(name: str, path: str) -> str | None:
    """A relative path names a different directory for each working directory a process
    starts in (collectstatic from one, a web server reading from another)."""
    if path.startswith("/"):
        return None
    return (
        f"{name} must be an absolute path, got {shown(path)}: a relative one names a "
        "different directory for each working directory"
    )


def readable_file_problem(name: str, path: str) -> str | None:
    """A file the service reads when it first needs it (a CA certificate): missing, it
    would fail every call then, on a node that started as if nothing were wrong."""
    if os.path.isfile(path) and os.access(path, os.R_OK):
        return None
    why = "no such file" if not os.path.exists(path) else "not a readable file"
    return f"{name} must be a readable file, got {shown(path)} ({why})"


# Milvus's names of collections: letters, digits and underscores, from a letter or an
# underscore, 255 characters at most; the service adds "_" and eight hex digits (the tag
# of the embedding model) to MILVUS_COLLECTION.
MILVUS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
MILVUS_COLLECTION_MAX_LENGTH = 255 - 9


def milvus_collection_problem(name: str, value: str) -> str | None:
    """A name the server refuses would leave every search and every indexer pass failing."""
    if MILVUS_NAME.fullmatch(value) and len(value) <= MILVUS_COLLECTION_MAX_LENGTH:
        return None
    return (
        f"{name} must be letters, digits and underscores, starting with a letter or an "
        f"underscore, at most {MILVUS_COLLECTION_MAX_LENGTH} characters, got {shown(value)}"
    )


# The schemes of a Milvus server's address (MILVUS_URI): gRPC, over TLS with https.
MILVUS_URI_SCHEMES = ("http", "https")


def milvus_uri_problem(name: str, uri: str) -> str | None:
    """What keeps the Milvus client (pymilvus) from reaching a server at `uri`, which must
    be http[s]://[user:password@]host[:port][/database]. pymilvus also reads MILVUS_URI
    from the environment when it is imported, and refuses there, with the whole URI in its
    error, an address without a host or port it can read, an IPv6 address, a port from
    65535, a unix socket and a Milvus Lite file: each is refused here first. No reason
    holds the URI, which may carry a password."""
    expected = f"{name} must be the Milvus server's address, http[s]://[user:password@]host[:port]"
    what = _milvus_uri_fault(uri)
    return f"{expected}, got {what}" if what else None


def _milvus_uri_fault(uri: str) -> str | None:
    scheme, separator, _rest = uri.partition("://")
    if uri.lower().startswith("unix:"):
        return "a unix socket (the client reads none from the environment)"
    if not separator and uri.endswith(".db"):
        return "a file (Milvus Lite: run it as a server, docs/search-milvus.md)"
    if not (separator and _SCHEME.fullmatch(scheme)):
        return "no scheme"
    if scheme.lower() not in MILVUS_URI_SCHEMES:
        return f"the scheme {shown(scheme.lower())}"
    # Read as urllib reads it, as pymilvus does: a password holding "/", "?", "#", "@", "["
    # or "]" not URL-encoded ends the host early, or leaves an unclosed "[".
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "no address the client can read (URL-encode the password)"
    if not parts.hostname:
        return "no host"
    if ":" in parts.hostname:
        return "an IPv6 address (the client reads none: name the host)"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port < 65535:
        return "a port that is not a number from 1 to 65534 (or a password not URL-encoded)"
    return None


# --- Rules between settings -------------------------------------------------------


def task_timeout_problem(*, timeout: int | None, retry: int | None) -> str | None:
    """django-q2 kills a task after Q_TIMEOUT seconds and delivers it again after Q_RETRY:
    the first must be set and lower, or a slow task runs twice at once."""
    if timeout is not None and retry is not None and timeout < retry:
        return None
    return (
        f"Q_TIMEOUT ({_given(timeout)}) must be lower than Q_RETRY ({_given(retry)}): a task "
        "still running when it is delivered again would run twice at once"
    )


def lock_wait_problem(*, lock_wait: int | None, read_timeout: int | None) -> str | None:
    """A statement waiting for a row lock gives up (an error the request answers 503) after
    DB_LOCK_WAIT_TIMEOUT; the connection's read timeout must not end the wait first, as if
    the database were down."""
    if lock_wait is None or read_timeout is None or lock_wait < read_timeout:
        return None
    return (
        f"DB_LOCK_WAIT_TIMEOUT ({lock_wait}) must be lower than DB_READ_TIMEOUT ({read_timeout}): "
        "a request waiting for a lock would be cut off as if the database were down"
    )


def openai_setting_problem(name: str, value: str) -> str | None:
    """The openai opinion provider needs an endpoint (OPINION_BASE_URL) and a model
    (OPINION_MODEL); without them the client would fall back to defaults of its own."""
    return None if value else f"{name} must be set when OPINION_PROVIDER is openai"


def opinion_task_seconds(*, timeout: int, retry: int) -> int:
    """How long the worker lets an opinion task run: up to Q_RETRY - 1 seconds (before it
    is delivered again), however short Q_TIMEOUT makes other tasks."""
    return max(timeout, retry - 1)


def opinion_calls_problem(*, timeout: float, max_retries: int, retry: int) -> str | None:
    """An opinion call and its retries take up to OPINION_TIMEOUT x (OPINION_MAX_RETRIES + 1)
    seconds, and must end before the worker kills the opinion task, which may run
    Q_RETRY - 1 seconds once Q_TIMEOUT is below Q_RETRY (opinion_task_seconds). Judge it
    only when task_timeout_problem() finds nothing."""
    seconds = timeout * (max_retries + 1)
    if seconds < retry - 1:
        return None
    return (
        f"OPINION_TIMEOUT x (OPINION_MAX_RETRIES + 1) = {seconds:g}s must be under the "
        f"opinion task's {retry - 1}s (Q_RETRY - 1): lower OPINION_TIMEOUT or OPINION_MAX_RETRIES"
    )


def _given(number: int | None) -> str:
    return "unset" if number is None else str(number)
