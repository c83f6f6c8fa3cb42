"""`python -m feedback.demo.session_mix`: the mix of demo sessions the words give, and
checks of their shape, to read after editing the JSON files."""

from __future__ import annotations

from collections import Counter

from feedback.demo.sessions import (
    DEFAULT_SEED,
    LEVELS,
    DemoSession,
    demo_session_drawn,
    demo_sessions,
)
from feedback.demo.wording import topics


def _best_evidence(session: DemoSession) -> str:
    levels = {inv.match_level for inv in session.invocations}
    return "L0 hit" if "L0" in levels else "L1 only" if "L1" in levels else "no hit"


def _is_chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _bucket(n: int) -> str:
    if n == 0:
        return "0"
    if n <= 2:
        return "1-2"
    if n <= 10:
        return "3-10"
    if n <= 19:
        return "11-19"
    return "20+"


def _pct(part: int, whole: int) -> str:
    return f"{part:5d} ({100 * part / whole:5.1f}%)" if whole else f"{part:5d}"


def _print_counter(title: str, counter: Counter[str], order: tuple[str, ...] = ()) -> None:
    total = sum(counter.values())
    print(f"{title} (n={total})")
    keys = list(order) + sorted(k for k in counter if k not in order)
    for key in keys:
        print(f"  {key:<14} {_pct(counter[key], total)}")


if __name__ == "__main__":
    built = [demo_session_drawn(DEFAULT_SEED, index) for index in range(300)]
    sessions = [session for _, session in built]
    calls = [inv for s in sessions for inv in s.invocations]

    problems = []
    if len({s.session_id for s in sessions}) != len(sessions):
        problems.append("duplicate session ids")
    if demo_sessions(500)[:300] != sessions or demo_sessions(300) != sessions:
        problems.append("sessions depend on count")
    for s in sessions:
        ids = [inv.invocation_id for inv in s.invocations]
        if len(set(ids)) != len(ids):
            problems.append(f"{s.session_id}: duplicate invocation ids")
        if (s.answer is not None or s.feedback is not None) and s.status != "SUCCESS":
            problems.append(f"{s.session_id}: answer/feedback on a {s.status} session")
        if len(s.session_id) > 64 or (s.user_id and len(s.user_id) > 64):
            problems.append(f"{s.session_id}: id too long")
        for inv in s.invocations:
            if len(inv.invocation_id) > 64 or len(inv.tool_name) > 128:
                problems.append(f"{s.session_id}/{inv.invocation_id}: field too long")
            if (inv.match_level in (None, "NONE")) != (inv.hit_count == 0):
                problems.append(f"{s.session_id}/{inv.invocation_id}: hit_count mismatch")
            if inv.duration_ms is not None and not 20 <= inv.duration_ms <= 8000:
                problems.append(f"{s.session_id}/{inv.invocation_id}: duration out of range")

    _print_counter("status", Counter(s.status for s in sessions), ("SUCCESS", "FAILED", "RUNNING"))
    _print_counter(
        "language", Counter("zh" if _is_chinese(s.query) else "en" for s in sessions), ("zh", "en")
    )
    _print_counter("category", Counter(topic.category for topic, _ in built))
    _print_counter(
        "invocations per session",
        Counter(_bucket(len(s.invocations)) for s in sessions),
        ("0", "1-2", "3-10", "11-19", "20+"),
    )
    _print_counter("call kind", Counter(inv.kind for inv in calls), ("retrieval", "other"))
    _print_counter("call status", Counter(inv.status for inv in calls), ("SUCCESS", "FAILED"))
    _print_counter(
        "match level (retrieval, SUCCESS)",
        Counter(
            str(inv.match_level)
            for inv in calls
            if inv.kind == "retrieval" and inv.status == "SUCCESS"
        ),
        LEVELS,
    )
    all_failed = sum(
        1 for s in sessions if s.invocations and all(i.status == "FAILED" for i in s.invocations)
    )
    print(f"sessions whose calls all FAILED: {all_failed}")
    success = [s for s in sessions if s.status == "SUCCESS"]
    _print_counter(
        "feedback (SUCCESS sessions)",
        Counter(str(s.feedback) for s in success),
        ("useful", "not_useful", "None"),
    )
    print("feedback by best evidence (SUCCESS sessions)")
    for label in ("L0 hit", "L1 only", "no hit"):
        mix = Counter(str(s.feedback) for s in success if _best_evidence(s) == label)
        total = sum(mix.values())
        shares = ", ".join(
            f"{key} {_pct(mix[key], total).strip()}" for key in ("useful", "not_useful", "None")
        )
        print(f"  {label:<8} n={total:<4} {shares}")
    long_queries = sum(1 for s in sessions if len(s.query) > 100)
    templates = sum(len(t.zh.questions) + len(t.en.questions) for t in topics())
    print(f"questions > 100 chars: {long_queries}; distinct question templates: {templates}")
    print(f"distinct questions: {len({s.query for s in sessions})} / {len(sessions)}")
    if problems:
        print("PROBLEMS:")
        for problem in problems[:20]:
            print(f"  {problem}")
        raise SystemExit(1)
    print("all checks passed")
