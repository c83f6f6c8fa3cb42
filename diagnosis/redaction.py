"""Secrets and personal data out of text before it is stored.

Every text taken from a trace (attribute values, status and exception messages, and so
the question, answer, tool arguments and results made from them) passes through
`redact()`. The patterns come from settings (REDACT_PATTERNS replaces the defaults below,
REDACT_PATTERNS_EXTRA adds to them); a pattern with a group named `secret` has only that
group replaced, so `password=hunter2` becomes `password=[redacted]`.
"""

import re
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

REDACTED = "[redacted]"

# key = value and "key": "value" forms; the value is the secret. A key ending in one of
# these words counts (db_password, client_secret); a key naming a secret counts whatever
# follows the word (SECRET_KEY, secret_key_base), but not the other words: `max_tokens`
# and `prompt_tokens` are token counts, in every model span. A value in quotes is the
# secret up to its closing quote (a backslash escapes one), spaces and all, or to the end
# of the line when cut off before it; a value without quotes ends at a space or separator.
# JSON held in a JSON string has its quotes escaped (\"api_key\": \"...\", and \\\" a level
# deeper): such a value ends at the same escaped quote when no backslash comes before it
# (one that does is a quote escaped inside the value), and the escaping is kept.
_KEYED = (
    r"(?i)(?:pass(?:word|wd|phrase)?|pwd|secrets?(?:[_-][\w-]*)?|api[_-]?key|apikey"
    r"|access[_-]?key(?:[_-]?id)?|access[_-]?token|refresh[_-]?token|auth[_-]?token|token"
    r"|private[_-]?key)"
    r"""(?:\\*["'])?\s*[:=]\s*(?:(?P<quote>["'])|(?P<escaped>\\+["']))?"""
    r"(?P<secret>(?(quote)(?:\\.|(?!(?P=quote))[^\\\r\n])+"
    r"|(?(escaped)(?:(?!(?<!\\)(?P=escaped))[^\r\n])+"
    r"""|(?!\\+["'])[^\s"',;&}]+)))"""
)

# The password of a URL (scheme://user:password@host), up to the last @ before the path:
# a password written with an @ in it is still all replaced, and the host is kept. A scheme
# is at most 32 characters: unbounded, every word of a long dotted text was a scheme's
# start scanned to its end (32,000 characters of `a.` took 2.2 s, four times the time for
# twice the text).
_URL_CREDENTIALS = r"(?i)\b[a-z][a-z0-9+.\-]{0,31}://[^\s:/?#@]*:(?P<secret>[^\s/?#]+)@"

# Each default pattern with the words one of which a text must contain for it to match
# (lower case; None: no such word). Most texts contain none of them, and `in` on a string
# is far cheaper than a regular-expression scan: this check made redaction of a typical
# span attribute 2.9x faster (54 -> 19 microseconds for the defaults, measured in one run
# on the OTLP benchmark's strings), where it was a third of the ingest's Python time.
_DEFAULTS: list[tuple[str, tuple[str, ...] | None]] = [
    # PEM private keys, whole.
    (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
        ("-----begin",),
    ),
    # Authorization headers: bearer tokens, basic credentials, our own API keys.
    (r"(?i)\b(?:bearer|basic)\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)", ("bearer", "basic")),
    (r"(?i)\bapi-key\s+(?P<secret>\S+)", ("api-key",)),
    # Before the e-mail addresses, which would take `password@host` for one.
    (_URL_CREDENTIALS, ("://",)),
    (_KEYED, ("pass", "pwd", "secret", "key", "token")),
    # Well-known key shapes: AWS access key ids, OpenAI-style keys, GitHub tokens,
    # Slack tokens, JSON web tokens, and this service's own API keys (prefix.secret).
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", ("akia", "asia")),
    (r"\bsk-[A-Za-z0-9_\-]{16,}", ("sk-",)),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", ("gh",)),
    (r"\bxox[abpr]-[A-Za-z0-9-]{10,}", ("xox",)),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", ("eyj",)),
    (r"\b[A-Za-z0-9]{8}\.[A-Za-z0-9]{32}\b", (".",)),
    # E-mail addresses, but not the user of a URL (ssh://git@github.com/...): the URL's
    # password, if any, was redacted above. Nor an scp-style address (git@github.com:org/
    # repo.git, deploy@web-1.example.com:~/app), which holds no secret: a host followed by
    # a colon and a path with a slash. The lookahead looks past the whole host, so that a
    # shorter match (git@github.co) cannot slip by it.
    (
        r"(?<!://)(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+"
        r"(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![\w.\-]*:[\w.~\-]*/)",
        ("@",),
    ),
    # Phone numbers: mainland China mobiles, and international +country numbers. A mobile
    # is an 11-digit number standing alone: not part of a longer number (a millisecond
    # timestamp), of a decimal (a score, 0.13912345678), or of an id or a hash written
    # with letters, an underscore or a hyphen (ORD13912345678, order-13912345678, a hex
    # trace id). Chinese text around it does not count (手机13912345678 is a mobile).
    (
        r"(?<![A-Za-z0-9_])(?<![A-Za-z0-9]-)(?<!\d\.)(?:\+?86[\s-]?)?1[3-9]\d{9}"
        r"(?![A-Za-z0-9_]|-[A-Za-z0-9]|\.\d)",
        None,
    ),
    (r"(?<![\w+])\+\d{1,3}[\s-]?\(?\d{2,4}\)?[\s-]?\d{3,4}[\s-]?\d{3,4}(?!\d)", ("+",)),
]
DEFAULT_PATTERNS: list[str] = [pattern for pattern, _ in _DEFAULTS]
_WORDS = dict(_DEFAULTS)


def configured_patterns() -> tuple[str, ...]:
    patterns = settings.REDACT_PATTERNS
    base = DEFAULT_PATTERNS if patterns is None else patterns
    return (*base, *settings.REDACT_PATTERNS_EXTRA)


@lru_cache(maxsize=4)
def _compiled(patterns: tuple[str, ...]) -> list[tuple[re.Pattern[str], tuple[str, ...] | None]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append((re.compile(pattern), _WORDS.get(pattern)))
        except re.error as exc:
            # config/settings.py compiles the environment's patterns at start-up; this
            # catches only settings changed in code (tests, a settings override).
            raise ImproperlyConfigured(
                f"REDACT_PATTERNS / REDACT_PATTERNS_EXTRA: {pattern!r} is not a regular "
                f"expression ({exc})"
            ) from None
    return compiled


def _replace(match: re.Match[str]) -> str:
    if "secret" in match.re.groupindex and match.group("secret") is not None:
        start, end = match.span("secret")
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + REDACTED + text[end - whole_start :]
    return REDACTED


def redactor() -> "Redactor":
    return Redactor(_compiled(configured_patterns()))


class Redactor:
    """Applies the configured patterns; made once per request."""

    def __init__(self, patterns: list[tuple[re.Pattern[str], tuple[str, ...] | None]]) -> None:
        self.patterns = patterns

    def __call__(self, text: str) -> str:
        lowered = text.lower()
        for pattern, words in self.patterns:
            if words is None or any(word in lowered for word in words):
                text = pattern.sub(_replace, text)
                lowered = text.lower()
        return text
