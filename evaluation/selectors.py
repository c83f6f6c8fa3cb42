"""Reads that turn tool-invocation rows into the rule engine's facts."""

from collections.abc import Collection

from django.db.models import Count, Q

from diagnosis.models import (
    DiagnosisSession,
    InvocationStatus,
    MatchLevel,
    ToolInvocation,
    ToolKind,
)
from evaluation.rules import InvocationFacts

NO_FACTS = InvocationFacts(total=0, successful=0, retrieval=0, l0_hits=0, l1_hits=0)


def _fact_aggregates(prefix: str = "") -> dict[str, Count]:
    """COUNT(...) and conditional COUNTs, one per InvocationFacts field."""
    pk, status, kind, level = (
        f"{prefix}{name}" for name in ("id", "status", "kind", "match_level")
    )
    success = Q(**{status: InvocationStatus.SUCCESS})
    return {
        "total": Count(pk),
        "successful": Count(pk, filter=success),
        "retrieval": Count(pk, filter=Q(**{kind: ToolKind.RETRIEVAL})),
        "l0_hits": Count(pk, filter=success & Q(**{level: MatchLevel.L0})),
        "l1_hits": Count(pk, filter=success & Q(**{level: MatchLevel.L1})),
    }


def _facts(row: dict) -> InvocationFacts:
    return InvocationFacts(
        total=row["total"],
        successful=row["successful"],
        retrieval=row["retrieval"],
        l0_hits=row["l0_hits"],
        l1_hits=row["l1_hits"],
    )


def session_status_and_facts(*, session_id: str) -> tuple[str, InvocationFacts] | None:
    """The session's status and its facts in one aggregate query; None if unknown."""
    rows = list(
        DiagnosisSession.objects.filter(session_id=session_id)
        .values("status")
        .annotate(**_fact_aggregates("tool_invocations__"))
        .order_by()
    )
    return (rows[0]["status"], _facts(rows[0])) if rows else None


def invocation_facts_by_session(*, session_ids: Collection[str]) -> dict[str, InvocationFacts]:
    """Facts for many sessions in one aggregate query over tool_invocation."""
    facts = dict.fromkeys(session_ids, NO_FACTS)
    rows = (
        ToolInvocation.objects.filter(session_id__in=session_ids)
        .values("session_id")
        .annotate(**_fact_aggregates())
        .order_by()
    )
    for row in rows:
        facts[row["session_id"]] = _facts(row)
    return facts
