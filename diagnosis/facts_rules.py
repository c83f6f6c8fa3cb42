"""The rules a session and its tool-invocation facts keep, whichever way they come in.

The REST API checks request bodies with them (diagnosis/serializers.py) and the services
check what in-process callers pass (diagnosis/services.py), before anything is written.
A problem is worded as the API words it: our English constants, DRF's and Django's
messages in the active language (English in the API's views and in the services). Every
check returns the problems it finds (none for a good value) and costs a few dict and set
lookups: batches are checked row by row.

Text marked `trimmed` is checked and stored without the whitespace around it, whichever
way it comes in: the API's fields and the services both cut it with
diagnosis.services.stored_text, which takes out bidirectional controls too, or, for an
`identifier`, with stored_identifier, which keeps its characters as sent.
"""

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, NamedTuple

from django.core.validators import ProhibitNullCharactersValidator
from django.db import models
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from config.api import (
    ALLOWED_VALUES,
    NOT_A_STRING,
    NOT_AN_INTEGER,
    UNKNOWN_FIELD,
    UNPAIRED_SURROGATE,
    shows_words,
)
from diagnosis.models import (
    SESSION_ID_MAX_LENGTH,
    SESSION_ID_PATTERN,
    DiagnosisSession,
    InvocationStatus,
    MatchLevel,
    SessionStatus,
    ToolInvocation,
    ToolKind,
)

Problems = list[str]

INT_MAX = 2_147_483_647  # MySQL INT
SESSION_ID_HELP = f'1-{SESSION_ID_MAX_LENGTH} characters of A-Z a-z 0-9 . _ : -, not "." or ".."'
SESSION_ID_INVALID = f"A sessionId is {SESSION_ID_HELP}."
FAILED_CALL_HAS_NO_LEVEL = "A failed call has no match level: leave matchLevel out or null."
ONLY_RETRIEVAL_HAS_LEVEL = "Only retrieval calls have a match level: leave matchLevel out or null."
ANSWER_NEEDED = "A SUCCESS completion needs the answer."
NOT_AN_OBJECT = "Expected a JSON object."

# DRF's and Django's words, translated when a problem is found.
REQUIRED = serializers.Field.default_error_messages["required"]
NULL = serializers.Field.default_error_messages["null"]
BLANK = serializers.CharField.default_error_messages["blank"]
MAX_LENGTH = serializers.CharField.default_error_messages["max_length"]
MIN_VALUE = serializers.IntegerField.default_error_messages["min_value"]
MAX_VALUE = serializers.IntegerField.default_error_messages["max_value"]
NUL = ProhibitNullCharactersValidator.message
SURROGATE = ProhibitSurrogateCharactersValidator.message


def _max_length(model: type[models.Model], field: str) -> int:
    return model._meta.get_field(field).max_length


USER_ID_MAX_LENGTH = _max_length(DiagnosisSession, "user_id")
INVOCATION_ID_MAX_LENGTH = _max_length(ToolInvocation, "invocation_id")
TOOL_NAME_MAX_LENGTH = _max_length(ToolInvocation, "tool_name")


class Allowed(NamedTuple):
    """The values a choice may take: in order, and as a set to look them up."""

    order: tuple[str, ...]
    values: frozenset[str]

    @classmethod
    def of(cls, values: Iterable[str]) -> "Allowed":
        order = tuple(str(value) for value in values)
        return cls(order, frozenset(order))

    @property
    def listed(self) -> str:
        return ", ".join(self.order)


INVOCATION_STATUSES = Allowed.of(InvocationStatus.values)
TOOL_KINDS = Allowed.of(ToolKind.values)
MATCH_LEVELS = Allowed.of(MatchLevel.values)
COMPLETION_STATUSES = Allowed.of([SessionStatus.SUCCESS, SessionStatus.FAILED])


# --- One value ----------------------------------------------------------------------


def choice_problems(value: object, allowed: Allowed) -> Problems:
    if isinstance(value, str) and value in allowed.values:
        return []
    return [ALLOWED_VALUES.replace("{allowed}", allowed.listed).format(input=value)]


def count_problems(value: object) -> Problems:
    """A count or a duration: a non-negative integer that fits MySQL's INT."""
    if not isinstance(value, int) or isinstance(value, bool):
        return [NOT_AN_INTEGER]
    if value > INT_MAX:
        return [str(MAX_VALUE).format(max_value=INT_MAX)]
    if value < 0:
        return [str(MIN_VALUE).format(min_value=0)]
    return []


def text_problems(value: object, *, max_length: int | None = None, blank: bool = False) -> Problems:
    """A text as it will be stored; an unpaired surrogate is the only problem named then."""
    if not isinstance(value, str):
        return [NOT_A_STRING]
    if not blank and not shows_words(value):
        return [str(BLANK)]
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return [UNPAIRED_SURROGATE]
    problems = []
    if max_length is not None and len(value) > max_length:
        problems.append(str(MAX_LENGTH).format(max_length=max_length))
    if "\x00" in value:
        problems.append(str(NUL))
    return problems


def session_id_problems(value: object) -> Problems:
    """A sessionId sent by an agent; the problems listed as the API's sessionId field lists
    them (its length, NUL and surrogates, then the pattern)."""
    if not isinstance(value, str):
        return [SESSION_ID_INVALID]
    if SESSION_ID_PATTERN.match(value):
        return []
    if not value:
        return [str(BLANK)]
    problems = []
    if len(value) > SESSION_ID_MAX_LENGTH:
        problems.append(str(MAX_LENGTH).format(max_length=SESSION_ID_MAX_LENGTH))
    if "\x00" in value:
        problems.append(str(NUL))
    surrogate = next((ord(ch) for ch in value if 0xD800 <= ord(ch) <= 0xDFFF), None)
    if surrogate is not None:
        problems.append(str(SURROGATE).format(code_point=surrogate))
    problems.append(SESSION_ID_INVALID)
    return problems


# --- Tool invocations ---------------------------------------------------------------


class Fact(NamedTuple):
    """The rule of one tool-invocation fact."""

    name: str  # in the API (JSON)
    required: bool
    nullable: bool
    default: object  # when absent
    check: Callable[[Any], Problems]  # of a value that is present and not null
    trimmed: bool = False  # stored without the whitespace around it (services.stored_text)
    identifier: bool = False  # its characters kept as sent (services.stored_identifier)


# By ToolInvocation's (and the services') name, in the order the API lists problems.
INVOCATION_FACTS: dict[str, Fact] = {
    "invocation_id": Fact(
        "invocationId",
        False,
        True,
        None,
        partial(text_problems, max_length=INVOCATION_ID_MAX_LENGTH),
        trimmed=True,
        identifier=True,
    ),
    "tool_name": Fact(
        "toolName",
        True,
        False,
        None,
        partial(text_problems, max_length=TOOL_NAME_MAX_LENGTH),
        trimmed=True,
    ),
    "kind": Fact(
        "kind", False, False, ToolKind.RETRIEVAL.value, partial(choice_problems, allowed=TOOL_KINDS)
    ),
    "status": Fact(
        "status", True, False, None, partial(choice_problems, allowed=INVOCATION_STATUSES)
    ),
    "match_level": Fact(
        "matchLevel", False, True, None, partial(choice_problems, allowed=MATCH_LEVELS)
    ),
    "hit_count": Fact("hitCount", False, False, 0, count_problems),
    "query": Fact("query", False, True, None, partial(text_problems, blank=True), trimmed=True),
    "error_message": Fact(
        "errorMessage", False, True, None, partial(text_problems, blank=True), trimmed=True
    ),
    "duration_ms": Fact("durationMs", False, True, None, count_problems),
}
_REQUIRED_FACTS = tuple(field for field, fact in INVOCATION_FACTS.items() if fact.required)
_DEFAULT_KIND = INVOCATION_FACTS["kind"].default


def match_level_problem(*, status: str, kind: str, match_level: str | None) -> str | None:
    """A match level is a fact about a successful retrieval; on anything else it is a lie."""
    if match_level is None:
        return None
    if status != InvocationStatus.SUCCESS:
        return FAILED_CALL_HAS_NO_LEVEL
    if kind != ToolKind.RETRIEVAL:
        return ONLY_RETRIEVAL_HAS_LEVEL
    return None


def invocation_problems(facts: object) -> dict[str, Problems] | Problems:
    """One tool invocation's facts as an in-process caller gives them (ToolInvocation's
    field names; the model's defaults fill gaps): the problems by fact name."""
    if not isinstance(facts, Mapping):
        return [NOT_AN_OBJECT]
    problems: dict[str, Problems] = {}
    for field, value in facts.items():
        fact = INVOCATION_FACTS.get(field)
        if fact is None:
            problems[str(field)] = [UNKNOWN_FIELD]
        elif value is None:
            if not fact.nullable:
                problems[field] = [str(NULL)]
        elif found := fact.check(value):
            problems[field] = found
    for field in _REQUIRED_FACTS:
        if field not in facts:
            problems[field] = [str(REQUIRED)]
    if not problems:
        problem = match_level_problem(
            status=facts["status"],
            kind=facts.get("kind", _DEFAULT_KIND),
            match_level=facts.get("match_level"),
        )
        if problem:
            problems["match_level"] = [problem]
    return problems


# --- The services' arguments, by their names ----------------------------------------


def session_start_problems(
    *, session_id: object, query: object, user_id: object
) -> dict[str, Problems]:
    """session_start's arguments; a session_id of None is generated, not checked."""
    problems = {
        "session_id": session_id_problems(session_id) if session_id is not None else [],
        "query": text_problems(query) if query is not None else [str(NULL)],
        "user_id": (
            text_problems(user_id, max_length=USER_ID_MAX_LENGTH) if user_id is not None else []
        ),
    }
    return {name: found for name, found in problems.items() if found}


def invocations_problems(
    *, session_id: object, invocations: list
) -> dict[str, Problems | dict[int, dict[str, Problems] | Problems]]:
    """invocations_record's arguments; a bad invocation is named by its index."""
    problems: dict[str, Any] = {}
    if found := session_id_problems(session_id):
        problems["session_id"] = found
    bad = {}
    for index, facts in enumerate(invocations):
        if found := invocation_problems(facts):
            bad[index] = found
    if bad:
        problems["invocations"] = bad
    return problems


def answer_problem(*, status: str, answer: str | None) -> str | None:
    """A SUCCESS completion carries the answer the user was given."""
    if status == SessionStatus.SUCCESS and not shows_words(answer):
        return ANSWER_NEEDED
    return None


def completion_problems(
    *, session_id: object, status: object, answer: object
) -> dict[str, Problems]:
    """session_complete's arguments."""
    problems = {
        "session_id": session_id_problems(session_id),
        "status": choice_problems(status, COMPLETION_STATUSES),
        "answer": text_problems(answer, blank=True) if answer is not None else [],
    }
    problems = {name: found for name, found in problems.items() if found}
    if not problems and (problem := answer_problem(status=status, answer=answer)):
        problems["answer"] = [problem]
    return problems
