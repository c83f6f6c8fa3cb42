"""Error codes in free text: found by pattern family, normalised so that equal codes compare
equal however an operator or an alert wrote them.

Pure Python (no Django): the case search, the structuring of new cases and the tests use it
alike. A code is what an operator would paste into a search box to find the runbook:
`ORA-01555`, `ERROR 1205`, `MY-013183`, `HTTP 503`, `CrashLoopBackOff`,
`java.lang.OutOfMemoryError`, `ENOSPC`, and Prometheus alert names (`KubePodCrashLooping`,
`HighCPUUsage`: see `caselibrary.alert_names` for the rule). A bare number is never a code:
an HTTP status needs its context (`HTTP 503`, `status=503`, `503 Service Unavailable`, `返回 503`).

Every family matches whole words in its real shape: no code starts or ends inside a longer
word or number (`Mirror4001`, `ENOSPCX`), a time of day (`09:05`, `14:05:30`) is never part
of a code, an Oracle number after a space has its four or five digits (`ORA 01555`, not
"ora 3 replicas"), and a one-word Kubernetes reason must be written as Kubernetes writes it
(`Evicted`, not "the pod was evicted").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from caselibrary.alert_names import iter_alert_matches, normalise_alert_name

__all__ = ["code_shaped_words", "error_code_key", "find_error_codes", "normalise_error_code"]

# Kubernetes container/pod reasons and event reasons, in their canonical spelling. Words
# such as "Pending" or "Unhealthy" are left out: in prose they are ordinary words.
K8S_REASONS = (
    "CrashLoopBackOff",
    "OOMKilled",
    "ImagePullBackOff",
    "ErrImagePull",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ContainerCannotRun",
    "FailedScheduling",
    "FailedMount",
    "FailedAttachVolume",
    "FailedCreatePodSandBox",
    "NodeNotReady",
    "Evicted",
    "DeadlineExceeded",
    "BackoffLimitExceeded",
)
_K8S_CANONICAL = {reason.casefold(): reason for reason in K8S_REASONS}

# Linux errno names, and the strerror() text each one prints as.
ERRNO_MESSAGES = {
    "ENOSPC": "No space left on device",
    "EMFILE": "Too many open files",
    "ENFILE": "Too many open files in system",
    "ECONNREFUSED": "Connection refused",
    "ECONNRESET": "Connection reset by peer",
    "ETIMEDOUT": "Connection timed out",
    "EHOSTUNREACH": "No route to host",
    "ENETUNREACH": "Network is unreachable",
    "EADDRINUSE": "Address already in use",
    "ENOMEM": "Cannot allocate memory",
    "EACCES": "Permission denied",
    "EPIPE": "Broken pipe",
    "EROFS": "Read-only file system",
    "EDQUOT": "Disk quota exceeded",
    "EAGAIN": "Resource temporarily unavailable",
    "EIO": "Input/output error",
    "ENOENT": "No such file or directory",
    "EBUSY": "Device or resource busy",
}

# Well-known Java exception classes by their simple name, so that `OutOfMemoryError` in an
# alert and `java.lang.OutOfMemoryError` on a case are one code.
JAVA_PACKAGES = {
    "OutOfMemoryError": "java.lang",
    "StackOverflowError": "java.lang",
    "NoClassDefFoundError": "java.lang",
    "NullPointerException": "java.lang",
    "ClassNotFoundException": "java.lang",
    "ClassCastException": "java.lang",
    "IllegalStateException": "java.lang",
    "IllegalArgumentException": "java.lang",
    "ArrayIndexOutOfBoundsException": "java.lang",
    "NumberFormatException": "java.lang",
    "UnsupportedOperationException": "java.lang",
    "InterruptedException": "java.lang",
    "ConcurrentModificationException": "java.util",
    "NoSuchElementException": "java.util",
    "TimeoutException": "java.util.concurrent",
    "RejectedExecutionException": "java.util.concurrent",
    "ExecutionException": "java.util.concurrent",
    "SocketTimeoutException": "java.net",
    "ConnectException": "java.net",
    "SocketException": "java.net",
    "UnknownHostException": "java.net",
    "IOException": "java.io",
    "FileNotFoundException": "java.io",
    "UncheckedIOException": "java.io",
    "SQLException": "java.sql",
    "SQLTimeoutException": "java.sql",
    "SQLTransientConnectionException": "java.sql",
    "SSLHandshakeException": "javax.net.ssl",
}
_maybe_java_BY_FOLDED = {name.casefold(): name for name in JAVA_PACKAGES}

# HTTP statuses worth a code: client and server errors (499 is nginx's client-closed).
_STATUS = r"(?P<status>4\d\d|5\d\d)"
_HTTP_REASONS = (
    "Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Request Timeout|Conflict|"
    "Payload Too Large|Request Entity Too Large|Too Many Requests|Client Closed Request|"
    "Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable|Service Temporarily "
    "Unavailable|Gateway Time-?out"
)
# Around a number: no word character, and no "." or ":" joining it to more digits, so
# that "1.503", "12:503" and "503:05" are not statuses.
_NOT_DIGIT_BEFORE = r"(?<![\w.:])"
_NOT_DIGIT_AFTER = r"(?![\w.:]*\d)(?!\w)"
# The start of a code word: not inside a longer word ("terror 2013", "xORA-1").
_WORD_START = r"(?<!\w)"


def _oracle(match: re.Match[str]) -> str:
    # "ORA 01555" (a space needs the full number) or "ORA-1555" / "ORA01555".
    number = match.groupdict().get("spaced") or match["number"]
    return f"{match['prefix'].upper()}-{int(number):05d}"


def _mysql(match: re.Match[str]) -> str:
    return f"ERROR {match['number']}"


def _mysql8(match: re.Match[str]) -> str:
    return f"MY-{match['number']}"


def _http(match: re.Match[str]) -> str:
    return f"HTTP {match['status']}"


def _k8s(match: re.Match[str]) -> str:
    return _K8S_CANONICAL[match[0].casefold()]


def _errno_name(match: re.Match[str]) -> str:
    return match[0]


_ERRNO_BY_MESSAGE = {message.casefold(): name for name, message in ERRNO_MESSAGES.items()}


def _errno_message(match: re.Match[str]) -> str:
    return _ERRNO_BY_MESSAGE[match[0].casefold()]


def _java(match: re.Match[str]) -> str:
    return normalise_error_code(match[0])


# Whether a family can match at all, from cheap substring checks on the text and its
# case-folded copy: most text has no error code, and fourteen regular expressions over
# every case's answer made building the search index three times slower.
_Trigger = Callable[[str, str], bool]
_Family = tuple[_Trigger, re.Pattern[str], Callable[[re.Match[str]], str]]

_K8S_FOLDED = tuple(_K8S_CANONICAL)


def _is_one_word(reason: str) -> bool:
    return sum(ch.isupper() for ch in reason) == 1


_ERRNO_MESSAGES_FOLDED = tuple(_ERRNO_BY_MESSAGE)
_STATUS_IN_TEXT = re.compile(r"(?<!\d)[45]\d\d(?!\d)")
_ERRNO_LIKE = re.compile(r"E[A-Z]{2,}")


def _maybe_oracle(text: str, folded: str) -> bool:
    return "ora" in folded or "tns" in folded


def _maybe_mysql8(text: str, folded: str) -> bool:
    return "my-" in folded


def _maybe_mysql(text: str, folded: str) -> bool:
    return "err" in folded


def _maybe_http(text: str, folded: str) -> bool:
    return _STATUS_IN_TEXT.search(text) is not None


def _maybe_k8s(text: str, folded: str) -> bool:
    return any(reason in folded for reason in _K8S_FOLDED)


def _maybe_errno_name(text: str, folded: str) -> bool:
    return _ERRNO_LIKE.search(text) is not None


def _maybe_errno_message(text: str, folded: str) -> bool:
    return any(message in folded for message in _ERRNO_MESSAGES_FOLDED)


def _maybe_java(text: str, folded: str) -> bool:
    return "exception" in folded or "error" in folded


# Each family: a pattern and how a match becomes the normalised code. Searched in this
# order, but codes are reported in the order they appear in the text.
_FAMILIES: tuple[_Family, ...] = (
    (
        _maybe_oracle,
        re.compile(
            rf"{_WORD_START}(?P<prefix>ORA|TNS)(?:[-_]?(?P<number>\d{{1,5}})|"
            rf" (?P<spaced>\d{{4,5}})){_NOT_DIGIT_AFTER}",
            re.I,
        ),
        _oracle,
    ),
    (
        _maybe_mysql8,
        re.compile(rf"{_WORD_START}MY-(?P<number>\d{{6}}){_NOT_DIGIT_AFTER}", re.I),
        _mysql8,
    ),
    # MySQL's "ERROR 1205 (HY000): Lock wait timeout exceeded"; codes 1000-4999.
    (
        _maybe_mysql,
        re.compile(
            rf"{_WORD_START}(?:ERROR|errno|MySQL error)[\s:#-]*(?P<number>[1-4]\d{{3}})"
            rf"{_NOT_DIGIT_AFTER}",
            re.I,
        ),
        _mysql,
    ),
    (
        _maybe_http,
        re.compile(
            rf"{_WORD_START}HTTP(?:/\d(?:\.\d)?)?[\s:=_-]*{_STATUS}"
            rf"{_NOT_DIGIT_AFTER}",
            re.I,
        ),
        _http,
    ),
    (
        _maybe_http,
        re.compile(
            r"(?<![A-Za-z])(?:status(?:[ _]?code)?|http_status|response code|状态码|返回码|响应码)"
            rf"\s*[:=]?\s*{_STATUS}{_NOT_DIGIT_AFTER}",
            re.I,
        ),
        _http,
    ),
    (
        _maybe_http,
        re.compile(
            rf"{_NOT_DIGIT_BEFORE}{_STATUS}\s+(?:{_HTTP_REASONS})\b",
            re.I,
        ),
        _http,
    ),
    # "full of 499 status", "502 responses": the word after the number says what it is.
    (
        _maybe_http,
        re.compile(
            rf"{_NOT_DIGIT_BEFORE}{_STATUS}\s+(?:status(?:es)?|responses?|status codes?)\b",
            re.I,
        ),
        _http,
    ),
    # Chinese prose around a status: "大量 504", "返回 503", "报 502", "出现大量 499".
    (
        _maybe_http,
        re.compile(
            r"(?:大量|返回|报|报错|出现|频繁|持续|一直|全是|偶发)\s*"
            rf"{_STATUS}{_NOT_DIGIT_AFTER}"
        ),
        _http,
    ),
    (
        _maybe_http,
        re.compile(
            rf"{_NOT_DIGIT_BEFORE}{_STATUS}\s*"
            r"(?:错误|报错|异常|状态码)"
        ),
        _http,
    ),
    # A reason of several capitalised words is a code however it is cased
    # ("crashloopbackoff"); a one-word reason only as Kubernetes writes it.
    (
        _maybe_k8s,
        re.compile(
            r"(?<![A-Za-z0-9_])(?:"
            + "|".join(
                reason if _is_one_word(reason) else f"(?i:{reason})" for reason in K8S_REASONS
            )
            + r")(?![A-Za-z0-9_])"
        ),
        _k8s,
    ),
    (
        _maybe_errno_name,
        re.compile(
            r"(?<![A-Za-z0-9_])(?:" + "|".join(sorted(ERRNO_MESSAGES, key=len, reverse=True)) + ")"
            r"(?![A-Za-z0-9_])"
        ),
        _errno_name,
    ),
    (
        _maybe_errno_message,
        re.compile(
            r"(?<![A-Za-z])(?:"
            + "|".join(
                re.escape(message)
                for message in sorted(ERRNO_MESSAGES.values(), key=len, reverse=True)
            )
            + r")(?![A-Za-z])",
            re.I,
        ),
        _errno_message,
    ),
    # Java (and the like) exception classes: a CamelCase name ending in Exception or Error,
    # optionally package-qualified. "Error" alone or "HTTP Error" is not a class.
    (
        _maybe_java,
        re.compile(r"(?<![\w.])(?:[a-z][a-z0-9_]*\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error)(?![\w])"),
        _java,
    ),
)


def find_error_codes(text: str) -> list[str]:
    """The error codes in `text`, normalised, in the order they first appear, no repeats."""
    if not text:
        return []
    found: list[tuple[int, int, str]] = []
    folded = text.casefold()
    # One check per trigger, shared by the families that use it (the six HTTP ones).
    triggered: dict[_Trigger, bool] = {}
    for trigger, pattern, normalise in _FAMILIES:
        fires = triggered.get(trigger)
        if fires is None:
            fires = triggered[trigger] = trigger(text, folded)
        if not fires:
            continue
        for match in pattern.finditer(text):
            found.append((match.start(), -(match.end() - match.start()), normalise(match)))
    found.extend((start, start - end, name) for start, end, name in iter_alert_matches(text))
    found.sort()
    codes: list[str] = []
    taken_until = -1
    for start, negative_length, code in found:
        # A span already claimed by an earlier (or longer) match is not a second code:
        # "No space left on device" is one ENOSPC, not also a message inside a message.
        if start < taken_until:
            continue
        taken_until = start - negative_length
        if code not in codes:
            codes.append(code)
    return codes


_FIXED_FORMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"\A(?P<prefix>ORA|TNS)[-_ ]?(?P<number>\d{1,5})\Z", re.I), _oracle),
    (re.compile(r"\AMY-(?P<number>\d{6})\Z", re.I), _mysql8),
    (re.compile(r"\A(?:ERROR|errno|MySQL error)[\s:#-]*(?P<number>\d{4})\Z", re.I), _mysql),
    (
        re.compile(r"\A(?:HTTP(?:/\d(?:\.\d)?)?|status)[\s:=_-]*(?P<status>[1-5]\d\d)\Z", re.I),
        _http,
    ),
)


_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_.:][A-Za-z0-9]+)*", re.ASCII)
_CAPITAL_INSIDE = re.compile(r"[a-z][A-Z]")


def code_shaped_words(text: str) -> list[str]:
    """The words of `text` shaped like a code an operator may have given a case though no
    family knows it: with a letter and a digit (`QA3-ERR-001`, `HY000`), words joined by
    an underscore (`ERR_RATE_LIMITED`), a capital inside (`InsufficientBalance`); each
    such word after another word also as the two (`SQLSTATE HY000`), first. A search
    tries them against the codes the cases carry: an exact hit only on that very code."""
    words: list[str] = []
    before: re.Match[str] | None = None
    for match in _WORD.finditer(text):
        word = match.group()
        if 3 <= len(word) <= 64 and _code_shaped(word):
            if before is not None and text[before.end() : match.start()] == " ":
                words.append(f"{before.group()} {word}")
            words.append(word)
        before = match
    return words


def _code_shaped(word: str) -> bool:
    if not any(ch.isalpha() for ch in word):
        return False  # a bare number is never a code
    return (
        any(ch.isdigit() for ch in word) or "_" in word or _CAPITAL_INSIDE.search(word) is not None
    )


def normalise_error_code(code: str) -> str:
    """The canonical spelling of one error code; an unknown code comes back trimmed.

    Idempotent: normalise_error_code(normalise_error_code(c)) == normalise_error_code(c).
    """
    text = " ".join(code.split())
    for pattern, normalise in _FIXED_FORMS:
        match = pattern.match(text)
        if match:
            return normalise(match)
    folded = text.casefold()
    if folded in _K8S_CANONICAL:
        return _K8S_CANONICAL[folded]
    if text.upper() in ERRNO_MESSAGES:
        return text.upper()
    if folded in _ERRNO_BY_MESSAGE:
        return _ERRNO_BY_MESSAGE[folded]
    if normalise_alert_name(text) != text:
        return normalise_alert_name(text)
    if folded in _maybe_java_BY_FOLDED:
        name = _maybe_java_BY_FOLDED[folded]
        return f"{JAVA_PACKAGES[name]}.{name}"
    package, dot, name = text.rpartition(".")
    if dot and name.casefold() in _maybe_java_BY_FOLDED:
        canonical = _maybe_java_BY_FOLDED[name.casefold()]
        if package.casefold() == JAVA_PACKAGES[canonical]:
            return f"{JAVA_PACKAGES[canonical]}.{canonical}"
    return text


def error_code_key(code: str) -> str:
    """What two codes must share to be the same code: the normalised code, case-folded.

    For a package-qualified class the simple name is the key, so that a class written
    with and without its package is found either way.
    """
    normalised = normalise_error_code(code)
    if re.fullmatch(r"(?:[a-z][a-z0-9_]*\.)+[A-Z]\w*", normalised):
        normalised = normalised.rpartition(".")[2]
    return normalised.casefold()


def iter_error_code_keys(text: str) -> Iterator[str]:
    """The keys (see error_code_key) of every code found in `text`."""
    for code in find_error_codes(text):
        yield error_code_key(code)
