"""Reads that turn tool-invocation rows into the rule engine's facts.

Hand-written SQL on purpose: this runs once per scored session, and building the
equivalent ORM aggregate cost ten times more than the database took to answer it. The
table and column names are the original schema's, fixed by contract.
"""

from collections.abc import Collection

from django.db import connection

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
