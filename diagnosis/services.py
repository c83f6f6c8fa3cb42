"""Writes for sessions and their tool-invocation facts.

Agents reach these over the REST API (diagnosis/views.py) or call them in-process, and
both ways keep the same rules (diagnosis/facts_rules.py): what the API refuses with a 400,
these functions refuse, before anything is written, with the API's own ValidationError
and its words for each problem, keyed by the argument's name (`session_id`, `query`,
`user_id`, `status`, `answer`), and for a fact by `invocations`, its index in the batch
and its name (`match_level`). A view reaching them with bad values still answers 400.

Text is stored as every way in stores it: a query, a userId and an invocation's tool
name, query and error message without the whitespace around them and without
bidirectional controls (stored_text(), which the API's fields for them apply too, so that
they check the value that is stored; diagnosis.text), its invocationId without the
whitespace around it, an invocation's query or error message left empty as null (no
text, as if absent: stored_facts()); an answer as given (Markdown may open with an
indent) but for bidirectional controls (stored_answer()).
"""

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, TypeVar
from uuid import uuid4

from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from rest_framework.exceptions import ValidationError

from config import metrics
from config.api import Conflict
from config.queue import enqueue_on_commit
from diagnosis.exceptions import (
    CompletionConflict,
    SessionAlreadyExists,
    SessionFinished,
    SessionNotFound,
)
from diagnosis.facts_rules import (
    INVOCATION_FACTS,
    completion_problems,
    invocations_problems,
    session_start_problems,
)
from diagnosis.models import DiagnosisSession, SessionStatus, ToolInvocation
from diagnosis.text import without_bidi_controls

logger = logging.getLogger(__name__)

# Scoring lives in a higher app: it is reached by the task's dotted name only.
SCORING_TASK = "evaluation.tasks.session_score"
SCORING_GROUP = "scoring"

T = TypeVar("T")

# The facts of a tool call an invocationId names: a retry repeats them all.
INVOCATION_CONTENT = (
    "tool_name",
    "kind",
    "status",
    "match_level",
    "hit_count",
    "query",
    "error_message",
    "duration_ms",
)
# The optional texts whose empty value is no text: stored null, as if absent, so that a
# retry dropping an empty field repeats its call. (An empty invocationId or tool name is
# refused, not taken for an absent one.)
_EMPTY_AS_NULL = ("query", "error_message")


def stored_text(value: T) -> T:
    """A text as it is stored: without bidirectional controls (diagnosis.text) and the
    whitespace around it. Anything that is not a string is left as it is, for the checks
    to name."""
    return without_bidi_controls(value).strip() if isinstance(value, str) else value  # type: ignore[return-value]


def stored_identifier(value: T) -> T:
    """An id as it is stored (an invocationId): without the whitespace around it, its
    characters as sent, so that a retry names the call it names."""
    return value.strip() if isinstance(value, str) else value  # type: ignore[return-value]


def stored_answer(value: T) -> T:
    """An answer as it is stored: as sent (Markdown may open with an indent), without
    bidirectional controls."""
    return without_bidi_controls(value)


# Each trimmed fact and how it is stored: an id as sent, a text as stored_text stores it.
_TRIMMED_FACTS = tuple(
    (field, stored_identifier if fact.identifier else stored_text)
    for field, fact in INVOCATION_FACTS.items()
    if fact.trimmed
)


class InvocationConflict(Conflict):
    """An invocationId sent again with other facts: a retry repeats its call, so this is
    another call under a key already taken (or a bug in the agent), never a duplicate."""

    code = "invocation_conflict"

    def __init__(self, invocation_id: str, fields: Iterable[str]) -> None:
        self.invocation_id = invocation_id
        names = "、".join(INVOCATION_FACTS[field].name for field in fields)
        super().__init__(
            f'invocationId "{invocation_id}" 已用于另一次工具调用（{names} 不同）：'
            "重试须发送与首次完全相同的内容，另一次调用请用新的 invocationId；"
            "本批未记录任何调用"
        )


class InvocationFacts(TypedDict):
    """One tool call's facts, as ToolInvocation's fields (the model's defaults fill gaps)."""

    tool_name: str
    status: str
    invocation_id: NotRequired[str | None]
    kind: NotRequired[str]
    match_level: NotRequired[str | None]
    hit_count: NotRequired[int]
    query: NotRequired[str | None]
    error_message: NotRequired[str | None]
    duration_ms: NotRequired[int | None]


@dataclass(frozen=True)
class RecordedInvocations:
    received: int
    created: int

    @property
    def duplicates(self) -> int:
        return self.received - self.created


def session_start(
    *, query: str, session_id: str | None = None, user_id: str | None = None
) -> DiagnosisSession:
    """Open a RUNNING session; a sessionId is generated when the agent has none."""
    query, user_id = stored_text(query), stored_text(user_id)
    _check(session_start_problems, session_id=session_id, query=query, user_id=user_id)
    session = DiagnosisSession(
        session_id=session_id if session_id is not None else str(uuid4()),
        query=query,
        user_id=user_id,
        status=SessionStatus.RUNNING,
    )
    if DiagnosisSession.objects.filter(session_id=session.session_id).exists():
        raise SessionAlreadyExists(session.session_id)
    try:
        with transaction.atomic():
            session.save(force_insert=True)
    except IntegrityError:
        # Lost a race with a request for the same id: the unique key decided.
        raise SessionAlreadyExists(session.session_id) from None
    logger.info("session started", extra={"session_id": session.session_id})
    return session


def invocations_record(
    *, session_id: str, invocations: Iterable[InvocationFacts]
) -> RecordedInvocations:
    """Store tool-invocation facts, all or nothing.

    An `invocation_id` already stored for the session with the same facts (a retry) is
    skipped, as is such a repeat within the batch; one repeated with other facts is an
    InvocationConflict, and nothing of the batch is stored. The session row lock makes
    concurrent batches for one session take turns, so overlapping retries store each
    fact once.
    """
    invocations = [stored_facts(facts) for facts in invocations]
    _check(invocations_problems, session_id=session_id, invocations=invocations)
    rows = [ToolInvocation(session_id=session_id, **facts) for facts in invocations]
    with transaction.atomic():
        session = _lock_session(session_id, fields=("id", "session_id", "status"))
        if session.status != SessionStatus.RUNNING:
            raise SessionFinished(session)
        keys = {row.invocation_id for row in rows if row.invocation_id is not None}
        seen: dict[str, dict[str, Any]] = {}
        if keys:
            stored = ToolInvocation.objects.filter(session_id=session_id, invocation_id__in=keys)
            for key, *content in stored.values_list("invocation_id", *INVOCATION_CONTENT):
                # A row stored before empty texts were stored null may hold "".
                seen[key] = _empty_as_null(dict(zip(INVOCATION_CONTENT, content, strict=True)))
        new_rows = []
        for row in rows:
            key = row.invocation_id
            if key is not None:
                content = {field: getattr(row, field) for field in INVOCATION_CONTENT}
                earlier = seen.get(key)
                if earlier is not None:
                    differing = [f for f in INVOCATION_CONTENT if earlier[f] != content[f]]
                    if differing:
                        raise InvocationConflict(key, differing)
                    continue  # a retry
                seen[key] = content
            new_rows.append(row)
        ToolInvocation.objects.bulk_create(new_rows)
    logger.info(
        "tool invocations recorded",
        extra={"session_id": session_id, "received": len(rows), "stored": len(new_rows)},
    )
    return RecordedInvocations(received=len(rows), created=len(new_rows))


def session_complete(
    *, session_id: str, status: str, answer: str | None = None
) -> tuple[DiagnosisSession, bool]:
    """RUNNING -> SUCCESS (with the answer) or FAILED, once.

    Returns the session and whether this call completed it. Repeating the same
    completion is a no-op; a different one is a CompletionConflict. Scoring is
    enqueued after the commit of a completion to SUCCESS.
    """
    answer = stored_answer(answer)
    _check(completion_problems, session_id=session_id, status=status, answer=answer)
    with transaction.atomic():
        session = _lock_session(session_id)
        if session.status != SessionStatus.RUNNING:
            if session.status == status and session.answer == answer:
                return session, False
            raise CompletionConflict(session)
        session.status = status
        session.answer = answer
        session.finished_at = timezone.now()
        session.save(update_fields=["status", "answer", "finished_at", "updated_at"])
        if status == SessionStatus.SUCCESS:
            enqueue_on_commit(SCORING_TASK, session_id, group=SCORING_GROUP)
    metrics.session_completed(status)
    logger.info("session completed", extra={"session_id": session_id, "status": status})
    return session, True


def stored_facts(facts: T) -> T:
    """One invocation's facts with their text as stored, whichever way they came in: text
    trimmed, an empty query or error message null (a caller's mapping is not changed);
    anything but a mapping is left for the checks to name."""
    if not isinstance(facts, Mapping):
        return facts
    trimmed = {field: stored(facts[field]) for field, stored in _TRIMMED_FACTS if field in facts}
    return _empty_as_null({**facts, **trimmed})  # type: ignore[return-value]


def _empty_as_null(facts: dict[str, Any]) -> dict[str, Any]:
    for field in _EMPTY_AS_NULL:
        if facts.get(field) == "":
            facts[field] = None
    return facts


def _check(problems_of: Callable[..., dict], **arguments: Any) -> None:
    """Refuse arguments the API would refuse, with its ValidationError."""
    # In the API's words: its field rules are English whatever the active language
    # (diagnosis/viewsets.py).
    with translation.override("en"):
        problems = problems_of(**arguments)
    if problems:
        raise ValidationError(problems)


def _lock_session(session_id: str, fields: Iterable[str] | None = None) -> DiagnosisSession:
    queryset = DiagnosisSession.objects.select_for_update()
    if fields:
        queryset = queryset.only(*fields)
    try:
        return queryset.get(session_id=session_id)
    except DiagnosisSession.DoesNotExist:
        raise SessionNotFound(session_id) from None
