"""Generated sessions with realistic fact mixes, bulk-inserted, for tests at volume."""

import random

from diagnosis.models import DiagnosisSession, ToolInvocation

STATUSES = ["SUCCESS"] * 78 + ["FAILED"] * 12 + ["RUNNING"] * 10
CALL_SHAPES = (
    [("SUCCESS", "retrieval", "L0")] * 18
    + [("SUCCESS", "retrieval", "L1")] * 25
    + [("SUCCESS", "retrieval", "NONE")] * 27
    + [("SUCCESS", "other", None)] * 20
    + [("FAILED", "retrieval", None)] * 7
    + [("FAILED", "other", None)] * 3
)


def generate_sessions(count: int, *, seed: int = 7, prefix: str = "gen") -> dict[str, list]:
    """Insert `count` sessions and their invocations; return {session_id: [(status, kind,
    level), ...]} so a test can compute what the scores must be."""
    rng = random.Random(seed)
    sessions, invocations, calls_by_session = [], [], {}
    for n in range(count):
        session_id = f"{prefix}-{n:07d}"
        status = rng.choice(STATUSES)
        calls_n = 0 if rng.random() < 0.06 else min(int(rng.expovariate(1 / 6)) + 1, 40)
        if rng.random() < 0.03:  # some sessions where every call failed
            calls = [("FAILED", "retrieval", None)] * max(calls_n, 1)
        else:
            calls = [rng.choice(CALL_SHAPES) for _ in range(calls_n)]
        sessions.append(
            DiagnosisSession(
                session_id=session_id,
                query=f"generated question {n}",
                status=status,
                answer=f"answer {n}" if status == "SUCCESS" else None,
            )
        )
        calls_by_session[session_id] = calls
        invocations.extend(
            ToolInvocation(
                session_id=session_id,
                invocation_id=f"{session_id}-{i}",
                tool_name="QueryInternalDocsTools" if kind == "retrieval" else "QueryMetricsTools",
                kind=kind,
                status=call_status,
                match_level=level,
                hit_count=3 if level in ("L0", "L1") else 0,
            )
            for i, (call_status, kind, level) in enumerate(calls)
        )
    DiagnosisSession.objects.bulk_create(sessions, batch_size=2000)
    ToolInvocation.objects.bulk_create(invocations, batch_size=2000)
    return {
        session.session_id: (session.status, calls_by_session[session.session_id])
        for session in sessions
    }
