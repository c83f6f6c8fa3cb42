"""Scoring sessions: load facts, run the pure rule engine, write the result in one UPDATE."""

import json
import logging
import socket
from collections.abc import Collection, Mapping, Sequence
from datetime import date, timedelta
from functools import lru_cache
from typing import NamedTuple

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.db.models.functions import Now
from django.utils import timezone

from config import metrics
from config.queue import enqueue_on_commit
from config.settings_rules import OPINION_PROVIDERS, opinion_task_seconds
from diagnosis.models import DiagnosisSession, SessionStatus
from evaluation.models import OpinionBudget, WorkerHeartbeat
from evaluation.opinion.base import (
    Opinion,
    OpinionError,
    OpinionProvider,
    OpinionSubject,
    OpinionUnreachable,
    opinion_document,
)
from evaluation.rules import Evaluation, InvocationFacts, evaluate
from evaluation.selectors import (
    invocation_facts_by_session,
    opinion_subjects,
    session_status_and_facts,
)

logger = logging.getLogger(__name__)

SCORABLE_STATUSES = (SessionStatus.SUCCESS, SessionStatus.FAILED)

# self_evaluation holds the rule part (evidence_score, source, factors, rules_version) and,
# once formed, the opinion (llm_opinion, always the last key). Rule writers and the
# opinion writer each change only their part, inside the database: JSON_SET on the
# current value, under the row lock of the UPDATE, so neither can undo the other's write
# (a read-modify-write in Python could, between its read and its write). The spelling is
# the same on MariaDB/MySQL and SQLite: JSON_EXTRACT hands JSON_SET a JSON value (an
# object), not a string. JSON_SET appends a new key at the end and keeps the others in
# their order, which is the order the contract gives.
OPINION_KEY = "llm_opinion"
_OPINION_PATH = "'$.llm_opinion'"
_STORED_OPINION = f"JSON_EXTRACT(self_evaluation, {_OPINION_PATH})"
# The new rule part (a parameter, twice), with the stored opinion carried over if any.
_RULE_PART_KEEPING_OPINION = (
    f"CASE WHEN {_STORED_OPINION} IS NULL THEN %s "
    f"ELSE JSON_SET(%s, {_OPINION_PATH}, {_STORED_OPINION}) END"
)
# The stored rule part, for comparing with a new one: MariaDB writes JSON functions'
# output as json.dumps does, SQLite in compact form (see _rule_texts).
STORED_RULE_PART = f"JSON_REMOVE(self_evaluation, {_OPINION_PATH})"


def _json(value: object, **options: object) -> str:
    """JSON text as stored: characters as themselves, not escape sequences, so a score reads
    (and is found by LIKE) as written on MariaDB, whose JSON is text."""
    return json.dumps(value, ensure_ascii=False, **options)


def _rule_texts(result: Evaluation) -> tuple[str, str]:
    """The rule part as JSON text in the two forms a database gives it back."""
    return _json(result), _json(result, separators=(",", ":"))


def _write_rule_part(result: Evaluation, where: str, params: Sequence[object]) -> int:
    """Store `result` as the rule part of the rows `where` picks, keeping their opinion.

    `where` is one of this module's constants, never input.
    """
    text = _json(result)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    sql = (
        f"UPDATE diagnosis_session SET self_evaluation = {_RULE_PART_KEEPING_OPINION}, "
        f"updated_at = %s WHERE {where}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [text, text, now, *params])
        return cursor.rowcount


def session_evaluate(*, session_id: str) -> Evaluation | None:
    """Score one finished session and store the result; RUNNING ones are left alone.

    Idempotent: the same facts give the same result, written whole in a single UPDATE,
    so a second delivery of the task changes nothing and a failure leaves NULL.
    """
    loaded = session_status_and_facts(session_id=session_id)
    if loaded is None:
        # Normal: OTLP ingest moves a trace id's placeholder session into the session its
        # spans name, and the placeholder's scoring task finds it gone.
        logger.info(
            "scoring skipped: session no longer exists (moved or deleted)",
            extra={"session_id": session_id},
        )
        return None
    status, facts = loaded
    if status not in SCORABLE_STATUSES:
        return None
    result = evaluate(session_status=status, facts=facts)
    if _write_rule_part(result, "session_id = %s AND status = %s", [session_id, status]):
        metrics.score_written(result["evidence_score"])
    opinions_enqueue(session_ids=[session_id])
    logger.info(
        "session scored",
        extra={"session_id": session_id, "evidence_score": result["evidence_score"]},
    )
    return result


Current = Mapping[str, str | None] | None


class ScoreCounts(NamedTuple):
    scored: int  # the sessions scored (read and evaluated)
    changed: int  # of them, those whose stored score was written (new or different)


def sessions_evaluate(*, sessions: Sequence[tuple[str, str]], current: Current = None) -> int:
    """How many sessions sessions_score scored."""
    return sessions_score(sessions=sessions, current=current).scored


def sessions_score(*, sessions: Sequence[tuple[str, str]], current: Current = None) -> ScoreCounts:
    """Score a batch of (session_id, status) pairs: one aggregate query, few UPDATEs.

    Sessions that share a result (most do) are written by one UPDATE ... WHERE IN.
    `current` (session_id -> the stored rule part as JSON text, STORED_RULE_PART), when
    the caller read it anyway, spares the write of every session whose score does not
    change: a rescore after no rule change then only reads. The text is compared with
    json.dumps' output and its compact form (MariaDB and SQLite); a database that stores
    JSON in another form (MySQL 8 reorders keys) only loses the saving. An opinion
    already formed is kept. Returns how many sessions were scored and how many of their
    stored scores were written. RUNNING sessions are skipped.
    """
    scorable = [(sid, status) for sid, status in sessions if status in SCORABLE_STATUSES]
    if not scorable:
        return ScoreCounts(0, 0)
    facts = invocation_facts_by_session(session_ids=[sid for sid, _ in scorable])
    # The rules are a pure function of (status, facts): evaluated once per distinct pair,
    # and sessions grouped by their result (as JSON text) for the writes.
    results: dict[tuple[str, InvocationFacts], tuple[Evaluation, tuple[str, str]]] = {}
    by_result: dict[str, tuple[Evaluation, list[str]]] = {}
    for sid, status in scorable:
        key = (status, facts[sid])
        known = results.get(key)
        if known is None:
            result = evaluate(session_status=status, facts=facts[sid])
            known = results[key] = (result, _rule_texts(result))
        if current is not None and current.get(sid) in known[1]:
            continue
        by_result.setdefault(known[1][0], (known[0], []))[1].append(sid)
    changed = 0
    if by_result:
        with transaction.atomic():
            for result, session_ids in by_result.values():
                placeholders = ", ".join(["%s"] * len(session_ids))
                written = _write_rule_part(result, f"session_id IN ({placeholders})", session_ids)
                changed += written
                for _ in range(written):
                    metrics.score_written(result["evidence_score"])
    opinions_enqueue(session_ids=[sid for sid, _ in scorable])
    return ScoreCounts(len(scorable), changed)


# --- Opinions -------------------------------------------------------------------------

PROVIDERS = OPINION_PROVIDERS
PROVIDER_HEURISTIC, PROVIDER_OPENAI, PROVIDER_OFF = OPINION_PROVIDERS


class OpinionBudgetExhausted(OpinionError):
    """Today's OPINION_DAILY_BUDGET of provider calls is spent."""


# Calls in a row that never reach the provider before a batch stops asking it.
UNREACHABLE_IN_A_ROW = 3


class OpinionEndpointUnreachable(OpinionError):
    """A batch stopped, its calls not reaching the provider (what it formed is stored)."""

    def __init__(self, message: str, *, written: int, failed: int, untried: int) -> None:
        super().__init__(message)
        self.written, self.failed, self.untried = written, failed, untried


# The opinion tasks, by name (evaluation/tasks.py imports this module).
OPINION_TASK = "evaluation.tasks.session_opinion"
OPINIONS_TASK = "evaluation.tasks.sessions_opinion"
OPINION_GROUP = "opinion"


def opinions_enabled() -> bool:
    return settings.OPINION_PROVIDER in (PROVIDER_HEURISTIC, PROVIDER_OPENAI)


def opinions_enqueue(*, session_ids: Sequence[str]) -> None:
    """Form the opinions the scored sessions lack, in a task after the current
    transaction commits; nothing when no provider is configured.

    Whoever scored them (the scoring task, the sweep, `rescore`, the admin): an opinion
    follows every score. Its own task: a slow or failing provider never holds up or
    undoes the score, and a broker hiccup here fails nothing (robust). The task may run
    up to just under Q_RETRY, as a remote provider's timeout and retries can outlast
    Q_TIMEOUT (evaluation/checks.py makes sure they fit in that).
    """
    if not session_ids or not opinions_enabled():
        return
    timeout = opinion_task_timeout()
    if len(session_ids) == 1:
        task, argument = OPINION_TASK, session_ids[0]
    else:
        task, argument = OPINIONS_TASK, list(session_ids)
    enqueue_on_commit(task, argument, group=OPINION_GROUP, timeout=timeout, robust=True)


def opinion_task_timeout() -> int:
    return opinion_task_seconds(
        timeout=settings.Q_CLUSTER["timeout"], retry=settings.Q_CLUSTER["retry"]
    )


def opinion_provider() -> OpinionProvider:
    """The configured provider (one per process and configuration: it keeps connections)."""
    name = settings.OPINION_PROVIDER
    if name == PROVIDER_HEURISTIC:
        return _heuristic()
    if name == PROVIDER_OPENAI:
        if not (settings.OPINION_BASE_URL and settings.OPINION_MODEL):
            # Never let the client fall back to its own default endpoint.
            raise OpinionError("OPINION_BASE_URL and OPINION_MODEL must be set (manage.py check)")
        return _openai(
            settings.OPINION_BASE_URL,
            settings.OPINION_MODEL,
            settings.OPINION_API_KEY,
            float(settings.OPINION_TIMEOUT),
            int(settings.OPINION_MAX_RETRIES),
        )
    raise OpinionError(f"no opinion provider configured (OPINION_PROVIDER={name!r})")


@lru_cache(maxsize=1)
def _heuristic() -> OpinionProvider:
    from evaluation.opinion.heuristic import HeuristicProvider

    return HeuristicProvider()


@lru_cache(maxsize=4)
def _openai(
    base_url: str, model: str, api_key: str, timeout: float, max_retries: int
) -> OpinionProvider:
    from evaluation.opinion.openai_provider import OpenAIConfig, OpenAIProvider

    return OpenAIProvider(
        OpenAIConfig(
            base_url=base_url,
            model=model,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
        )
    )


def opinion_budget_spend(*, limit: int, day: date | None = None) -> bool:
    """Take one call from today's budget (UTC day); False when it is spent.

    One conditional UPDATE (`calls < limit`) per call: concurrent workers on any number of
    machines cannot take more than `limit` between them. The day's row is created by the
    first call; a second process creating it at the same moment loses on the primary key
    and takes its call through the UPDATE.
    """
    if limit <= 0:
        return False
    today = day or timezone.now().date()
    budget = OpinionBudget.objects.filter(day=today, calls__lt=limit)
    if budget.update(calls=F("calls") + 1):
        return True
    try:
        with transaction.atomic():
            OpinionBudget.objects.create(day=today, calls=1)
        return True
    except IntegrityError:
        return bool(budget.update(calls=F("calls") + 1))


def opinion_budget_refund(*, day: date) -> None:
    """Give back a call taken from `day`'s budget that never reached the provider (taken
    before, given back after: concurrent workers still never make more than the budget)."""
    OpinionBudget.objects.filter(day=day, calls__gt=0).update(calls=F("calls") - 1)


def _form(provider: OpinionProvider, subject: OpinionSubject) -> Opinion:
    paid = provider.source == "llm"
    day = timezone.now().date()
    if paid and not opinion_budget_spend(limit=settings.OPINION_DAILY_BUDGET, day=day):
        raise OpinionBudgetExhausted(
            f"today's opinion budget of {settings.OPINION_DAILY_BUDGET} calls is spent"
        )
    try:
        factors = provider.form(subject)
    except OpinionUnreachable:
        if paid:
            opinion_budget_refund(day=day)
        raise
    return opinion_document(provider=provider, factors=factors, created_at=timezone.now())


# The opinion, a parameter, set as the last key of scored rows; the rule part untouched.
# updated_at is left alone too: it dates the session and its score, the opinion carries
# its own created_at.
_SET_OPINION = (
    f"UPDATE diagnosis_session SET self_evaluation = "
    f"JSON_SET(self_evaluation, {_OPINION_PATH}, JSON_EXTRACT({{value}}, '$')) "
    "WHERE self_evaluation IS NOT NULL AND session_id {where}"
)


def session_opinion_form(*, session_id: str, replace: bool = False) -> Opinion | None:
    """Form the session's opinion with the configured provider and store it.

    None (and nothing stored) when the session is not scored yet, or, unless `replace`,
    already has an opinion: a second delivery of the task changes nothing and calls no
    paid provider twice. Raises OpinionError when the provider cannot give a valid
    opinion (refused, malformed, timed out, over budget): nothing is stored and the rule
    score is untouched.
    """
    subject = opinion_subjects(session_ids=[session_id], only_missing=not replace).get(session_id)
    if subject is None:
        return None
    opinion = _form(opinion_provider(), subject)
    sql = _SET_OPINION.format(value="%s", where="= %s")
    params: list[object] = [_json(opinion), session_id]
    if not replace:
        # Another delivery may have written one meanwhile: the first one stays.
        sql += f" AND {_STORED_OPINION} IS NULL"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        written = cursor.rowcount
    if not written:
        return None
    logger.info(
        "opinion formed",
        extra={"session_id": session_id, "opinion_source": opinion["source"]},
    )
    return opinion


def sessions_opinion_form(
    *, session_ids: Collection[str], only_missing: bool = False
) -> tuple[int, int]:
    """(Re)form the opinions of many scored sessions: two reads and one UPDATE per batch.

    The opinions are set by a single UPDATE (a CASE over the session ids). A session whose
    opinion cannot be formed keeps what it had and is counted as failed; the others are
    still written. Returns (written, failed). Stops asking a paid provider once the day's
    budget is spent (the rest count as failed). After UNREACHABLE_IN_A_ROW calls in a row
    that never reached the provider, stores what was formed and raises
    OpinionEndpointUnreachable (with the counts).
    """
    subjects = opinion_subjects(session_ids=session_ids, only_missing=only_missing)
    if not subjects:
        return 0, 0
    provider = opinion_provider()
    opinions: dict[str, str] = {}
    failed = in_a_row = 0
    unreachable = ""
    for sid, subject in subjects.items():
        try:
            opinions[sid] = _json(_form(provider, subject))
            in_a_row = 0
        except OpinionUnreachable as exc:
            failed += 1
            in_a_row += 1
            logger.warning("opinion not formed: %s", exc, extra={"session_id": sid})
            if in_a_row >= UNREACHABLE_IN_A_ROW:
                unreachable = str(exc)
                break
        except OpinionBudgetExhausted:
            failed += len(subjects) - len(opinions) - failed
            logger.warning("opinion budget spent; the remaining sessions keep no new opinion")
            break
        except OpinionError as exc:
            failed += 1
            in_a_row = 0  # the provider answered, if not with an opinion
            logger.warning("opinion not formed: %s", exc, extra={"session_id": sid})
    written = _opinions_write(opinions) if opinions else 0
    if unreachable:
        untried = len(subjects) - len(opinions) - failed
        raise OpinionEndpointUnreachable(
            unreachable, written=written, failed=failed, untried=untried
        )
    return written, failed


def _opinions_write(opinions: Mapping[str, str]) -> int:
    """Set each session's opinion (session id -> JSON text) by one UPDATE."""
    cases = " ".join(["WHEN %s THEN %s"] * len(opinions))
    placeholders = ", ".join(["%s"] * len(opinions))
    sql = _SET_OPINION.format(value=f"CASE session_id {cases} END", where=f"IN ({placeholders})")
    params: list[object] = [v for pair in opinions.items() for v in pair]
    params += list(opinions)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def sessions_score_overdue(*, older_than_seconds: int, window_hours: int, limit: int) -> int:
    """Score SUCCESS sessions completed more than `older_than_seconds` ago that still have
    no score, among those created in the last `window_hours`: the ones whose scoring task
    was lost. A worker killed while holding a task loses it on the Redis broker (it has
    no redelivery; the ORM broker redelivers after Q_RETRY). Bounded to the window, so a
    minute's sweep reads that window's SUCCESS sessions off (status, created_at), not the
    table; older gaps are for `rescore --missing`. Returns how many were scored."""
    from diagnosis.selectors import sessions_unscored

    now = timezone.now()
    overdue = sessions_unscored(
        DiagnosisSession.objects.filter(
            status=SessionStatus.SUCCESS,
            created_at__gte=now - timedelta(hours=window_hours),
            finished_at__lt=now - timedelta(seconds=older_than_seconds),
        )
    )
    batch = list(overdue.order_by("created_at").values_list("session_id", "status")[:limit])
    if not batch:
        return 0
    scored = sessions_evaluate(sessions=batch)
    logger.warning("scoring sweep: scored %d sessions whose task was lost", scored)
    return scored


def heartbeat_record() -> None:
    """Stamp this host's heartbeat with the database's clock, not this process's: the web
    nodes age it by that clock too (evaluation.health), so a worker whose clock is off
    neither reads as gone while it beats nor as alive after it stopped."""
    WorkerHeartbeat.objects.update_or_create(
        host=socket.gethostname()[:255], defaults={"beat_at": Now()}
    )
