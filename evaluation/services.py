"""Scoring sessions: load facts, run the pure rule engine, write the result in one UPDATE."""

import json
import logging
import socket
from collections.abc import Mapping, Sequence

from django.db import transaction
from django.utils import timezone

from diagnosis.models import DiagnosisSession, SessionStatus
from evaluation.models import WorkerHeartbeat
from evaluation.rules import Evaluation, InvocationFacts, evaluate
from evaluation.selectors import invocation_facts_by_session, session_status_and_facts

logger = logging.getLogger(__name__)

SCORABLE_STATUSES = (SessionStatus.SUCCESS, SessionStatus.FAILED)


def session_evaluate(*, session_id: str) -> Evaluation | None:
    """Score one finished session and store the result; RUNNING ones are left alone.

    Idempotent: the same facts give the same result, written whole in a single UPDATE,
    so a second delivery of the task changes nothing and a failure leaves NULL.
    """
    loaded = session_status_and_facts(session_id=session_id)
    if loaded is None:
        logger.warning("scoring skipped: session does not exist", extra={"session_id": session_id})
        return None
    status, facts = loaded
    if status not in SCORABLE_STATUSES:
        return None
    result = evaluate(session_status=status, facts=facts)
    DiagnosisSession.objects.filter(session_id=session_id, status=status).update(
        self_evaluation=result, updated_at=timezone.now()
    )
    logger.info(
        "session scored",
        extra={"session_id": session_id, "evidence_score": result["evidence_score"]},
    )
    return result


def sessions_evaluate(
    *,
    sessions: Sequence[tuple[str, str]],
    current: Mapping[str, str | None] | None = None,
) -> int:
    """Score a batch of (session_id, status) pairs: one aggregate query, few UPDATEs.

    Sessions that share a result (most do) are written by one UPDATE ... WHERE IN.
    `current` (session_id -> stored self_evaluation as its JSON text), when the caller
    read it anyway, spares the write of every session whose score does not change: a
    rescore after no rule change then only reads. The text is compared with what
    Django's JSONField writes (json.dumps); a database that stores JSON in another form
    (MySQL 8 reorders keys) only loses the saving. Returns how many sessions were
    scored. RUNNING sessions are skipped.
    """
    scorable = [(sid, status) for sid, status in sessions if status in SCORABLE_STATUSES]
    if not scorable:
        return 0
    facts = invocation_facts_by_session(session_ids=[sid for sid, _ in scorable])
    # The rules are a pure function of (status, facts): evaluated once per distinct pair,
    # and sessions grouped by their result (as JSON text) for the writes.
    results: dict[tuple[str, InvocationFacts], tuple[Evaluation, str]] = {}
    by_result: dict[str, tuple[Evaluation, list[str]]] = {}
    for sid, status in scorable:
        key = (status, facts[sid])
        known = results.get(key)
        if known is None:
            result = evaluate(session_status=status, facts=facts[sid])
            known = results[key] = (result, json.dumps(result))
        if current is not None and current.get(sid) == known[1]:
            continue
        by_result.setdefault(known[1], (known[0], []))[1].append(sid)
    if not by_result:
        return len(scorable)
    now = timezone.now()
    with transaction.atomic():
        for result, session_ids in by_result.values():
            DiagnosisSession.objects.filter(session_id__in=session_ids).update(
                self_evaluation=result, updated_at=now
            )
    return len(scorable)


def heartbeat_record() -> None:
    WorkerHeartbeat.objects.update_or_create(
        host=socket.gethostname()[:255], defaults={"beat_at": timezone.now()}
    )
