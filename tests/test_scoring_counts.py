"""The rule engine knows every value the models allow, and the database's counting of a
session's calls agrees with the rule engine's own for every combination of them."""

from collections.abc import Iterator
from itertools import combinations_with_replacement, product

import pytest

from diagnosis.models import (
    DiagnosisSession,
    InvocationStatus,
    MatchLevel,
    SessionStatus,
    ToolInvocation,
    ToolKind,
)
from evaluation import rules
from evaluation.rules import InvocationFacts, evaluate
from evaluation.selectors import invocation_facts_by_session, session_status_and_facts
from evaluation.services import SCORABLE_STATUSES, session_evaluate, sessions_evaluate
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

Call = tuple[str, str, str | None]

# What the models allow a stored call to be: a match level may also be missing.
MODEL_MATCH_LEVELS = [
    *MatchLevel.values,
    *([None] if ToolInvocation._meta.get_field("match_level").null else []),
]
# Every (status, kind, match_level) the models allow. The API accepts a subset of them
# (a match level only on a successful retrieval); older rows may hold the others.
EVERY_CALL: list[Call] = list(product(InvocationStatus.values, ToolKind.values, MODEL_MATCH_LEVELS))
FINISHED_STATUSES = set(SessionStatus.values) - {SessionStatus.RUNNING}


# --- The values the rules know ---------------------------------------------------------


@pytest.mark.parametrize(
    ("what", "known", "allowed"),
    [
        pytest.param(what, known, allowed, id=what)
        for what, known, allowed in [
            ("tool kind", rules.KINDS, ToolKind.values),
            ("invocation status", rules.INVOCATION_STATUSES, InvocationStatus.values),
            ("match level", rules.MATCH_LEVELS, MODEL_MATCH_LEVELS),
            ("finished session status", rules.SESSION_STATUSES, FINISHED_STATUSES),
            ("scored session status", rules.SESSION_STATUSES, SCORABLE_STATUSES),
        ]
    ],
)
def test_the_rule_engine_knows_exactly_the_values_the_models_allow(
    what: str, known: frozenset, allowed: list
) -> None:
    unknown = sorted(set(allowed) - set(known), key=str)
    stale = sorted(set(known) - set(allowed), key=str)
    differences = [
        *([f"the models allow {unknown} that evaluation.rules does not know"] if unknown else []),
        *([f"evaluation.rules knows {stale} that the models do not allow"] if stale else []),
    ]

    assert not differences, (
        f"{what}: {'; '.join(differences)}. Teach evaluation.rules (its value sets, "
        "InvocationFacts.from_calls, the rules) and the counting query in "
        "evaluation/selectors.py, then bump RULES_VERSION if scores change."
    )


@pytest.mark.parametrize(
    ("named", "choice"),
    [
        (rules.SESSION_SUCCESS, SessionStatus.SUCCESS),
        (rules.SESSION_FAILED, SessionStatus.FAILED),
        (rules.INVOCATION_SUCCESS, InvocationStatus.SUCCESS),
        (rules.INVOCATION_FAILED, InvocationStatus.FAILED),
        (rules.KIND_RETRIEVAL, ToolKind.RETRIEVAL),
        (rules.KIND_OTHER, ToolKind.OTHER),
        (rules.MATCH_L0, MatchLevel.L0),
        (rules.MATCH_L1, MatchLevel.L1),
        (rules.MATCH_NONE, MatchLevel.NONE),
    ],
)
def test_each_value_the_rules_name_is_the_model_choice_of_that_meaning(
    named: str, choice: str
) -> None:
    assert named == choice.value, (
        f"evaluation.rules calls {named!r} what the models call {choice!r}"
    )


# --- The database's counts and from_calls ------------------------------------------------


def _call_groups() -> Iterator[tuple[Call, ...]]:
    """No call, each call alone, every pair (a call twice too), and all of them at once."""
    yield ()
    for call in EVERY_CALL:
        yield (call,)
    yield from combinations_with_replacement(EVERY_CALL, 2)
    yield tuple(EVERY_CALL)


def _stored_sessions() -> dict[str, tuple[str, tuple[Call, ...]]]:
    """A successful session per group of calls, and one with all of them under each other
    session status: session_id -> (status, calls)."""
    wanted = [(SessionStatus.SUCCESS.value, calls) for calls in _call_groups()]
    others = set(SessionStatus.values) - {SessionStatus.SUCCESS}
    wanted += [(status, tuple(EVERY_CALL)) for status in sorted(others)]
    sessions = {}
    rows = []
    for status, calls in wanted:
        session = DiagnosisSessionFactory(status=status)
        sessions[session.session_id] = (status, calls)
        rows += [
            ToolInvocationFactory.build(
                session=session, status=call_status, kind=kind, match_level=level
            )
            for call_status, kind, level in calls
        ]
    ToolInvocation.objects.bulk_create(rows)
    return sessions


def _by_calls(per_session: dict[str, object], sessions: dict) -> dict[tuple, object]:
    """Keyed by (status, calls), so a mismatch names the calls it is about."""
    return {sessions[sid]: value for sid, value in per_session.items()}


@pytest.mark.django_db
def test_the_database_counts_every_combination_of_calls_as_from_calls_does() -> None:
    sessions = _stored_sessions()
    expected = {sid: InvocationFacts.from_calls(calls) for sid, (_, calls) in sessions.items()}

    one_by_one = {sid: session_status_and_facts(session_id=sid) for sid in sessions}
    assert _by_calls(one_by_one, sessions) == _by_calls(
        {sid: (status, expected[sid]) for sid, (status, _) in sessions.items()}, sessions
    )

    many = invocation_facts_by_session(session_ids=[*sessions, "not-stored"])
    assert many.pop("not-stored") == InvocationFacts.from_calls([])
    assert _by_calls(many, sessions) == _by_calls(expected, sessions)


@pytest.mark.django_db
def test_every_combination_of_calls_is_stored_with_the_score_its_calls_earn() -> None:
    sessions = _stored_sessions()
    expected = {
        sid: evaluate(session_status=status, facts=InvocationFacts.from_calls(calls))
        if status in SCORABLE_STATUSES
        else None
        for sid, (status, calls) in sessions.items()
    }

    sessions_evaluate(sessions=[(sid, status) for sid, (status, _) in sessions.items()])
    in_batches = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))
    DiagnosisSession.objects.update(self_evaluation=None)
    for sid in sessions:
        session_evaluate(session_id=sid)
    one_by_one = dict(DiagnosisSession.objects.values_list("session_id", "self_evaluation"))

    assert _by_calls(in_batches, sessions) == _by_calls(expected, sessions)
    assert _by_calls(one_by_one, sessions) == _by_calls(expected, sessions)
