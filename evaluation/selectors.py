"""Reads that turn tool-invocation rows into the rule engine's facts.

Hand-written SQL on purpose: this runs once per scored session, and building the
equivalent ORM aggregate cost ten times more than the database took to answer it. The
table and column names are the original schema's, fixed by contract.
"""

from collections.abc import Collection

from django.db import connection
from django.db.models import Q
from django.db.models.functions import Substr

from diagnosis.models import DiagnosisSession, ToolInvocation
from evaluation.opinion.base import OpinionSubject, ToolFact
from evaluation.rules import InvocationFacts

NO_FACTS = InvocationFacts(total=0, successful=0, retrieval=0, l0_hits=0, l1_hits=0)

# COUNT(t.id) counts nothing on the LEFT JOIN's NULL row: a session without calls has 0.
_FACT_COLUMNS = """
    COUNT(t.id),
    COUNT(CASE WHEN t.status = 'SUCCESS' THEN 1 END),
    COUNT(CASE WHEN t.kind = 'retrieval' THEN 1 END),
    COUNT(CASE WHEN t.status = 'SUCCESS' AND t.match_level = 'L0' THEN 1 END),
    COUNT(CASE WHEN t.status = 'SUCCESS' AND t.match_level = 'L1' THEN 1 END)
"""

# Only constant fragments are formatted in; values always go as parameters.
_ONE_SESSION = f"""
    SELECT s.status, {_FACT_COLUMNS}
    FROM diagnosis_session s
    LEFT JOIN tool_invocation t ON t.session_id = s.session_id
    WHERE s.session_id = %s
    GROUP BY s.id, s.status
"""

_MANY_SESSIONS = """
    SELECT t.session_id, {columns}
    FROM tool_invocation t
    WHERE t.session_id IN ({placeholders})
    GROUP BY t.session_id
"""


def _facts(counts: tuple) -> InvocationFacts:
    total, successful, retrieval, l0_hits, l1_hits = (int(c) for c in counts)
    return InvocationFacts(
        total=total, successful=successful, retrieval=retrieval, l0_hits=l0_hits, l1_hits=l1_hits
    )


def session_status_and_facts(*, session_id: str) -> tuple[str, InvocationFacts] | None:
    """The session's status and its facts in one aggregate query; None if unknown."""
    with connection.cursor() as cursor:
        cursor.execute(_ONE_SESSION, [session_id])
        row = cursor.fetchone()
    return (row[0], _facts(row[1:])) if row else None


def invocation_facts_by_session(*, session_ids: Collection[str]) -> dict[str, InvocationFacts]:
    """Facts for many sessions in one aggregate query over tool_invocation."""
    facts = dict.fromkeys(session_ids, NO_FACTS)
    if not facts:
        return facts
    sql = _MANY_SESSIONS.format(columns=_FACT_COLUMNS, placeholders=", ".join(["%s"] * len(facts)))
    # Most sessions share their counts with others: one InvocationFacts per distinct row.
    distinct: dict[tuple, InvocationFacts] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, list(facts))
        for row in cursor.fetchall():
            counts = row[1:]
            found = distinct.get(counts)
            if found is None:
                found = distinct[counts] = _facts(counts)
            facts[row[0]] = found
    return facts


# --- Opinions -------------------------------------------------------------------------

# What an opinion reads of a session, bounded in SQL so a huge answer or a session with
# thousands of calls costs a bounded transfer: the providers read no more than this.
OPINION_ANSWER_CHARS = 100_000
OPINION_QUESTION_CHARS = 4_000
OPINION_TOOL_TEXT_CHARS = 4_000
OPINION_TOOLS_PER_SESSION = 200


def opinion_subjects(
    *, session_ids: Collection[str], only_missing: bool = False
) -> dict[str, OpinionSubject]:
    """Question, answer and tool facts of the scored sessions among `session_ids`.

    Sessions not scored yet (or unknown) are left out: an opinion sits beside a rule
    score. With `only_missing`, so are those that already have an opinion.
    """
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return {}
    sessions = DiagnosisSession.objects.filter(session_id__in=ids, self_evaluation__isnull=False)
    if only_missing:
        sessions = sessions.filter(~Q(self_evaluation__has_key="llm_opinion"))
    rows = sessions.values_list(
        "session_id",
        Substr("query", 1, OPINION_QUESTION_CHARS),
        Substr("answer", 1, OPINION_ANSWER_CHARS),
    )
    found = {sid: (query or "", answer or "") for sid, query, answer in rows}
    tools: dict[str, list[ToolFact]] = {sid: [] for sid in found}
    if found:
        calls = (
            ToolInvocation.objects.filter(session_id__in=list(found))
            .order_by("session_id", "id")
            .values_list(
                "session_id",
                "tool_name",
                "status",
                "match_level",
                Substr("query", 1, OPINION_TOOL_TEXT_CHARS),
                Substr("error_message", 1, OPINION_TOOL_TEXT_CHARS),
            )
        )
        for sid, name, status, level, query, error in calls:
            facts = tools[sid]
            if len(facts) < OPINION_TOOLS_PER_SESSION:
                facts.append(ToolFact(name, status, level, query or "", error or ""))
    return {
        sid: OpinionSubject(query=query, answer=answer, tools=tuple(tools[sid]))
        for sid, (query, answer) in found.items()
    }
