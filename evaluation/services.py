"""Scoring sessions: load facts, run the pure rule engine, write the result in one UPDATE."""

import logging
import socket
from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone

from diagnosis.models import DiagnosisSession, SessionStatus
from evaluation.models import WorkerHeartbeat
from evaluation.rules import Evaluation, evaluate
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


def sessions_evaluate(*, sessions: Sequence[tuple[str, str]]) -> int:
    """Score a batch of (session_id, status) pairs: one aggregate query, few UPDATEs.

    Sessions that share a result (most do) are written by one UPDATE ... WHERE IN.
    Returns how many sessions were written. RUNNING sessions are skipped.
    """
    scorable = [(sid, status) for sid, status in sessions if status in SCORABLE_STATUSES]
    if not scorable:
        return 0
    facts = invocation_facts_by_session(session_ids=[sid for sid, _ in scorable])
    by_result: dict[str, tuple[Evaluation, list[str]]] = {}
    for sid, status in scorable:
        result = evaluate(session_status=status, facts=facts[sid])
        key = repr(result)
        by_result.setdefault(key, (result, []))[1].append(sid)
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
