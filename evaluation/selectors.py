"""Reads that turn tool-invocation rows into the rule engine's facts.

Hand-written SQL on purpose: this runs once per scored session, and building the
equivalent ORM aggregate cost ten times more than the database took to answer it. The
table and column names are the original schema's, fixed by contract.
"""

import hashlib
import re
from collections.abc import Collection

from django.db import connection

from diagnosis.models import DiagnosisSession, InvocationStatus, MatchLevel, ToolKind
from evaluation.opinion.base import OpinionSubject, ToolFact
from evaluation.rules import InvocationFacts, rules_fingerprint

NO_FACTS = InvocationFacts(total=0, successful=0, retrieval=0, l0_hits=0, l1_hits=0)


def _choice_literal(choice: str) -> str:
    """A model choice's value as an SQL string literal.

    Choices are constants of the code, never input; the check keeps a quote, or a percent
    sign the driver would read as a placeholder, out of the query text all the same.
    """
    value = str(choice)
    if not re.fullmatch(r"[A-Za-z0-9_]+", value):
        raise ValueError(f"not a plain choice value: {value!r}")
    return f"'{value}'"


_SUCCESS = _choice_literal(InvocationStatus.SUCCESS)
_RETRIEVAL = _choice_literal(ToolKind.RETRIEVAL)
_L0 = _choice_literal(MatchLevel.L0)
_L1 = _choice_literal(MatchLevel.L1)
# The counts InvocationFacts holds, in its field order. The values they compare with are
# the models' choices, formatted in once at import: the database sees plain literals, the
# same text as if written by hand. counting_fingerprint ties this text to RULES_VERSION.
# COUNT(t.id) counts nothing on the LEFT JOIN's NULL row: a session without calls has 0.
_FACT_COLUMNS = f"""
    COUNT(t.id),
    COUNT(CASE WHEN t.status = {_SUCCESS} THEN 1 END),
    COUNT(CASE WHEN t.kind = {_RETRIEVAL} THEN 1 END),
    COUNT(CASE WHEN t.status = {_SUCCESS} AND t.match_level = {_L0} THEN 1 END),
    COUNT(CASE WHEN t.status = {_SUCCESS} AND t.match_level = {_L1} THEN 1 END)
"""

# Only constant fragments are formatted in (the choices above are constants too); values
# always go as parameters.
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


def counting_fingerprint() -> str:
    """A digest of the rules together with the counting that feeds them.

    The rules' own digest (rules_fingerprint) and the query's fact columns as the database
    runs them, whitespace aside: a change to either changes it, and tests/test_rules.py
    then asks for a new RULES_VERSION.
    """
    counting = " ".join(_FACT_COLUMNS.split())
    return hashlib.sha256(f"{rules_fingerprint()}\n{counting}".encode()).hexdigest()


def session_statuses(*, session_ids: Collection[str]) -> list[tuple[str, str]]:
    """(session_id, status) of the known sessions among `session_ids`."""
    return list(
        DiagnosisSession.objects.filter(session_id__in=list(session_ids)).values_list(
            "session_id", "status"
        )
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


# Hand-written, as the facts query above: the ORM's query building cost more than the
# database took to answer (an opinion task spent two thirds of its time there).
_OPINION_SESSIONS = """
    SELECT session_id, SUBSTR(query, 1, %s), SUBSTR(answer, 1, %s)
    FROM diagnosis_session
    WHERE session_id IN ({placeholders}) AND self_evaluation IS NOT NULL {missing}
"""
_WITHOUT_OPINION = "AND JSON_EXTRACT(self_evaluation, '$.llm_opinion') IS NULL"
_OPINION_TOOLS = """
    SELECT session_id, tool_name, status, match_level, SUBSTR(query, 1, %s),
           SUBSTR(error_message, 1, %s)
    FROM tool_invocation
    WHERE session_id IN ({placeholders})
    ORDER BY session_id, id
"""


def opinion_subjects(
    *, session_ids: Collection[str], only_missing: bool = False
) -> dict[str, OpinionSubject]:
    """Question, answer and tool facts of the scored sessions among `session_ids`.

    Sessions not scored yet (or unknown) are left out: an opinion sits beside a rule
    score. With `only_missing`, so are those that already have an opinion. Two queries,
    however many sessions.
    """
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return {}
    placeholders = ", ".join(["%s"] * len(ids))
    sql = _OPINION_SESSIONS.format(
        placeholders=placeholders, missing=_WITHOUT_OPINION if only_missing else ""
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [OPINION_QUESTION_CHARS, OPINION_ANSWER_CHARS, *ids])
        found = {sid: (query or "", answer or "") for sid, query, answer in cursor.fetchall()}
        tools: dict[str, list[ToolFact]] = {sid: [] for sid in found}
        if found:
            cursor.execute(
                _OPINION_TOOLS.format(placeholders=", ".join(["%s"] * len(found))),
                [OPINION_TOOL_TEXT_CHARS, OPINION_TOOL_TEXT_CHARS, *found],
            )
            for sid, name, status, level, query, error in cursor.fetchall():
                facts = tools[sid]
                if len(facts) < OPINION_TOOLS_PER_SESSION:
                    facts.append(ToolFact(name, status, level, query or "", error or ""))
    return {
        sid: OpinionSubject(query=query, answer=answer, tools=tuple(tools[sid]))
        for sid, (query, answer) in found.items()
    }
