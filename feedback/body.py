"""The /api/feedback request body: its one validator, in the contract's words.

A plain function rather than a DRF serializer. The endpoint is a hot path held to the
plainest code doing its writes, and a serializer builds its fields anew for every
request (a deep copy of each declared field): 0.27 ms of a 1.65 ms `not_useful` served
in process on MariaDB, which left the endpoint at 0.75 x its plain-Django floor in the
benchmark (1.33 x slower). The checks are the same ones, one problem, one message.
"""

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.utils import translation

from config.api import INVISIBLE, NOT_WORDS
from diagnosis.models import (
    SESSION_ID_CHARACTERS,
    SESSION_ID_LOOKUP_PATTERN,
    SESSION_ID_MAX_LENGTH,
    Feedback,
)
from diagnosis.text import without_bidi_controls
from feedback.models import COMMENT_MAX_LENGTH, FeedbackReason

ALLOWED_FEEDBACK = ", ".join(Feedback.values)
INVALID_FEEDBACK = f"feedback 取值无效，允许的值：{ALLOWED_FEEDBACK}"
FEEDBACK_MISSING = "缺少 feedback"
NOT_A_JSON_OBJECT = "请求体必须是 JSON 对象"
ALLOWED_REASONS = ", ".join(FeedbackReason.values)
INVALID_REASON = f"reason 取值无效，允许的值：{ALLOWED_REASONS}"
REASON_WITH_USEFUL = "reason 只能与 feedback=not_useful 一起提交"
CORRECTION_MAX_LENGTH = 10_000
CREDENTIAL_IN_BODY = "反馈令牌只能放在请求头中：Authorization: Feedback <token>"
# Keys a client might put a token under by mistake: refused, never read.
TOKEN_BODY_KEYS = ("token", "feedbackToken", "feedback_token")

SESSION_ID_MISSING = "缺少 sessionId"
SESSION_ID_NOT_A_STRING = "sessionId 必须是字符串"
SESSION_ID_BLANK = "sessionId 不能为空"
SESSION_ID_TOO_LONG = f"sessionId 不能超过 {SESSION_ID_MAX_LENGTH} 个字符"
SESSION_ID_INVALID = "sessionId 只能包含 A-Z a-z 0-9 . _ : -"
# Any id of the contract's characters is looked up, dots alone included: only a new session
# may not be `.` or `..` (diagnosis.models), and one adopted from the original database
# may have such an id.
SESSION_ID_HELP = f"1-{SESSION_ID_MAX_LENGTH} characters of A-Z a-z 0-9 . _ : -"
# The same rule in the OpenAPI schema (ECMA-262: no \A or \Z).
SESSION_ID_SCHEMA_PATTERN = rf"^[{SESSION_ID_CHARACTERS}]{{1,{SESSION_ID_MAX_LENGTH}}}$"

FREE_TEXT_LIMITS = {"comment": COMMENT_MAX_LENGTH, "correction": CORRECTION_MAX_LENGTH}
_NO_INVISIBLE = str.maketrans("", "", INVISIBLE)
# The validator (and its words) every text field of the ingest API refuses a NUL with.
_NO_NUL = ProhibitNullCharactersValidator()
# The contract's messages are Chinese, whatever language the request is served in.
CONTRACT_LANGUAGE = "zh-hans"


class InvalidFeedbackBody(ValueError):
    """The body breaks a rule; the message is the contract's, for the response body."""


@dataclass(frozen=True)
class FeedbackBody:
    session_id: str
    feedback: str
    reason: str = ""
    comment: str = ""
    correction: str = ""

    def details(self) -> dict[str, str]:
        """reason, comment and correction as given ("" for those left out)."""
        return {"reason": self.reason, "comment": self.comment, "correction": self.correction}


def feedback_body_from(data: Any) -> FeedbackBody:
    """The parsed JSON body as a FeedbackBody, or InvalidFeedbackBody with the first
    problem (in the order sessionId, feedback, reason, comment, correction). Keys it does
    not know are ignored."""
    if not isinstance(data, dict):
        raise InvalidFeedbackBody(NOT_A_JSON_OBJECT)
    # A token in the body would be logged, cached and kept by whatever sees bodies: it
    # belongs in the Authorization header only.
    if any(key in data for key in TOKEN_BODY_KEYS):
        raise InvalidFeedbackBody(CREDENTIAL_IN_BODY)
    session_id = _session_id(data.get("sessionId"))
    feedback = _feedback(data.get("feedback"))
    reason = _reason(data.get("reason"))
    # A reason says what was wrong with the answer.
    if reason and feedback == Feedback.USEFUL:
        raise InvalidFeedbackBody(REASON_WITH_USEFUL)
    return FeedbackBody(
        session_id=session_id,
        feedback=feedback,
        reason=reason,
        comment=_free_text(data, "comment"),
        correction=_free_text(data, "correction"),
    )


def _session_id(value: Any) -> str:
    if value is None:
        raise InvalidFeedbackBody(SESSION_ID_MISSING)
    if not isinstance(value, str):
        raise InvalidFeedbackBody(SESSION_ID_NOT_A_STRING)
    if not value.strip():
        raise InvalidFeedbackBody(SESSION_ID_BLANK)
    if len(value) > SESSION_ID_MAX_LENGTH:
        raise InvalidFeedbackBody(SESSION_ID_TOO_LONG)
    if not SESSION_ID_LOOKUP_PATTERN.match(value):
        raise InvalidFeedbackBody(SESSION_ID_INVALID)
    return value


def _feedback(value: Any) -> str:
    # Missing (absent or null) is said as for sessionId; any other value is invalid.
    if value is None:
        raise InvalidFeedbackBody(FEEDBACK_MISSING)
    return _choice(value, Feedback.values, INVALID_FEEDBACK)


def _choice(value: Any, allowed: list[str], message: str) -> str:
    # Exactly one of the values: "Useful", " useful", null, 1 and true are not.
    if not isinstance(value, str) or value not in allowed:
        raise InvalidFeedbackBody(message)
    return value


def _reason(value: Any) -> str:
    # "" is what a form's "no choice" option sends: a reason left out, as null is.
    if value is None or value == "":
        return ""
    return _choice(value, FeedbackReason.values, INVALID_REASON)


def _free_text(data: dict, name: str) -> str:
    """A reader's own words: a string (null, "" or nothing but blanks and invisible
    characters for none), kept as typed but for invisible characters at its ends and
    bidirectional controls (diagnosis.text). A NUL
    character, which the database cannot store, is refused as the ingest API refuses
    one: not dropped unseen."""
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidFeedbackBody(f"{name} 必须是字符串")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: "\ud800" is valid JSON, no text
        raise InvalidFeedbackBody(f"{name} 含有无效的 Unicode 字符（不成对的代理项）") from None
    try:
        _NO_NUL(value)
    except ValidationError as problem:
        with translation.override(CONTRACT_LANGUAGE):
            raise InvalidFeedbackBody(f"{name} {problem.message}") from None
    # Stored without bidirectional controls, which would make it show other words.
    value = without_bidi_controls(value)
    limit = FREE_TEXT_LIMITS[name]
    if len(value) > limit:
        raise InvalidFeedbackBody(f"{name} 不能超过 {limit} 个字符")
    return _words(value)


def _words(value: str) -> str:
    """Spaces and invisible characters alone say nothing: no words, no row of history.
    Words are kept whole, the spaces around them too; invisible characters go from the
    ends only (inside, a joiner may be part of an emoji)."""
    # Both ends matched from their start (the tail on the reversed text): linear, where a
    # pattern anchored at the end is tried again from every blank inside the text.
    head = NOT_WORDS.match(value).end()
    if head == len(value):
        return ""
    tail = len(value) - NOT_WORDS.match(value[::-1]).end()
    return (
        value[:head].translate(_NO_INVISIBLE)
        + value[head:tail]
        + value[tail:].translate(_NO_INVISIBLE)
    )


# The body in the OpenAPI schema, from the same limits the validator applies.
FEEDBACK_BODY_SCHEMA = {
    "type": "object",
    "required": ["sessionId", "feedback"],
    "properties": {
        "sessionId": {
            "type": "string",
            "minLength": 1,
            "maxLength": SESSION_ID_MAX_LENGTH,
            "pattern": SESSION_ID_SCHEMA_PATTERN,
            "description": SESSION_ID_HELP,
        },
        "feedback": {"type": "string", "enum": Feedback.values},
        "reason": {
            "type": "string",
            "enum": [*FeedbackReason.values, ""],
            "nullable": True,
            "description": (
                "Optional, with not_useful only: why the answer was not useful "
                '("" or null for none).'
            ),
        },
        "comment": {
            "type": "string",
            "nullable": True,
            "maxLength": COMMENT_MAX_LENGTH,
            "description": (
                "Optional: the reader's words, up to 2,000; blanks and invisible "
                "characters alone are none."
            ),
        },
        "correction": {
            "type": "string",
            "nullable": True,
            "maxLength": CORRECTION_MAX_LENGTH,
            "description": (
                "Optional: the right root cause or fix, as the reader knows it (blanks and "
                "invisible characters alone are none). The bad-case review can turn it "
                "into a case."
            ),
        },
    },
}
