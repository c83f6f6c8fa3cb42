"""Deterministic demo sessions: questions, tool-invocation facts, answers and feedback.

Pure standard library on purpose (no Django), so it can feed fixtures, the loader, tests
and the benchmark alike. Every session is derived from its own `random.Random`, so a
session's content depends only on the seed and its index: growing `count` appends
sessions and never rewrites the earlier ones.

The words live in JSON files beside this module, to be edited without touching code:

- `topics.json`: one entry per kind of incident. A session's question, its tool queries
  and the agent's answer all come from one topic, so its evidence trail reads as if it
  belonged to its question. `zh`/`en` hold the questions, search keywords, root cause
  and steps per language; `codes` are the error codes quoted; `metric_queries` and
  `log_queries` are PromQL/LogQL templates, where `@name` names one of the vocabulary's
  `shared_queries`; `services`, when given, narrows the services the topic is about.
- `vocabulary.json`: services, their tables, clusters, people, and how operators phrase
  a question (prefixes, suffixes, an occasional extra paragraph).
- `tools.json`: the agent's tools with their weights, their queries per language, their
  failures (message and how long a failure takes: timeouts take as long as the timeout,
  refusals come back fast), typical latency, how many calls a session makes and how
  good the evidence of a session is.

Templates are `str.format` strings over the context drawn for a session (`wording.py`
reads the files and draws the words). The order of every list matters: it is part of
what a seed produces. `python -m feedback.demo.session_mix` prints the mix after an edit.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from feedback.demo.wording import (
    Topic,
    context,
    question,
    tool_query,
    tools_file,
    topics,
    vocabulary_file,
    weighted,
)

__all__ = [
    "FEEDBACK_AFTER",
    "OPINION_AFTER",
    "SCORED_AFTER",
    "SESSION_LENGTH",
    "SESSION_STORY",
    "STRUCTURED_AFTER",
    "DemoInvocation",
    "DemoSession",
    "demo_session_drawn",
    "demo_sessions",
]

DEFAULT_SEED = 20261202
LEVELS = ("L0", "L1", "NONE")

# A demo session's clock, for the loaders that date its facts. The agent answers within
# SESSION_LENGTH of the question, its tool calls spread over that time; the scoring task
# runs on completion and the opinion task after it; a reader who rates the answer does so
# after reading it, and a `useful` case is structured right after it is made.
SESSION_LENGTH = timedelta(minutes=2)
SCORED_AFTER = timedelta(seconds=3)  # after the answer
OPINION_AFTER = timedelta(seconds=5)  # after the score
FEEDBACK_AFTER = timedelta(minutes=7)  # after the answer
STRUCTURED_AFTER = timedelta(seconds=5)  # after the case
# From the question to the last of these: a session starts at least this long before the
# moment it is loaded, so nothing of it lies ahead of that moment.
SESSION_STORY = SESSION_LENGTH + FEEDBACK_AFTER + timedelta(minutes=1)


@dataclass(frozen=True)
class DemoInvocation:
    invocation_id: str
    tool_name: str
    kind: str
    status: str
    match_level: str | None
    hit_count: int
    query: str | None
    error_message: str | None
    duration_ms: int | None


@dataclass(frozen=True)
class DemoSession:
    """One demo session.

    `days_ago` and `minutes_into_day` place the session in local time; for sessions
    with `days_ago == 0` a loader should clamp the result to SESSION_STORY before "now",
    since the time of day may still lie ahead.
    """

    session_id: str
    user_id: str | None
    query: str
    status: str
    answer: str | None
    invocations: tuple[DemoInvocation, ...]
    feedback: str | None
    days_ago: int
    minutes_into_day: int


def _duration(rng: random.Random, tool: str) -> int:
    median = tools_file()["median_ms"][tool]
    return max(20, min(8000, int(median * rng.lognormvariate(0.0, 0.6))))


def _invocations(
    rng: random.Random,
    topic: Topic,
    zh: bool,
    ctx: dict[str, str],
    count: int,
    failure_rate: float,
) -> tuple[DemoInvocation, ...]:
    tools = tools_file()
    # Evidence quality is decided per session, not per call: otherwise every session
    # with a handful of retrieval calls would land an L0 hit and the feedback split by
    # evidence would be flat.
    profiles = tools["evidence_profiles"]
    profile = rng.choices(
        [[p["weights"][level] for level in LEVELS] for p in profiles],
        weights=[p["share"] for p in profiles],
    )[0]
    calls = []
    for n in range(1, count + 1):
        retrieval = rng.random() >= 0.25
        if retrieval:
            tool = weighted(rng, tools["retrieval_tools"])
        elif n == 1 and rng.random() < 0.5:
            # Resolving "since 14:05" into a time range is a natural first step.
            tool = "DateTimeTools"
        else:
            tool = weighted(rng, tools["other_tools"])
        query = tool_query(rng, tool, topic, zh, ctx)
        if rng.random() < failure_rate:
            failure = rng.choice(tools["failures"][tool])
            calls.append(
                DemoInvocation(
                    invocation_id=f"inv-{n:03d}",
                    tool_name=tool,
                    kind="retrieval" if retrieval else "other",
                    status="FAILED",
                    match_level=None,
                    hit_count=0,
                    query=query,
                    error_message=failure["message"].format(**ctx),
                    duration_ms=rng.randint(failure["min_ms"], failure["max_ms"]),
                )
            )
            continue
        match_level = None
        hit_count = 0
        if retrieval:
            match_level = rng.choices(LEVELS, weights=profile)[0]
            if match_level == "L0":
                hit_count = rng.choices(
                    range(1, 13), weights=(30, 22, 15, 10, 7, 5, 4, 3, 1, 1, 1, 1)
                )[0]
            elif match_level == "L1":
                hit_count = rng.choices(
                    range(1, 13), weights=(8, 12, 14, 14, 12, 10, 8, 7, 5, 4, 3, 3)
                )[0]
        # A few tools do not report their latency.
        duration = None if rng.random() < 0.02 else _duration(rng, tool)
        calls.append(
            DemoInvocation(
                invocation_id=f"inv-{n:03d}",
                tool_name=tool,
                kind="retrieval" if retrieval else "other",
                status="SUCCESS",
                match_level=match_level,
                hit_count=hit_count,
                query=query,
                error_message=None,
                duration_ms=duration,
            )
        )
    return tuple(calls)


def _answer(
    rng: random.Random,
    topic: Topic,
    zh: bool,
    ctx: dict[str, str],
    invocations: tuple[DemoInvocation, ...],
) -> str:
    levels = {inv.match_level for inv in invocations}
    reference_ids = {
        "rb": f"RB-{rng.randint(100, 999)}",
        "inc": f"INC-2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-{rng.randint(1, 40):02d}",
    }
    words = topic.zh if zh else topic.en
    steps = "\n".join(f"{i}. {step.format(**ctx)}" for i, step in enumerate(words.steps, start=1))
    if zh:
        parts = [f"根因分析：\n{words.cause.format(**ctx)}", f"处理建议：\n{steps}"]
        if "L0" in levels:
            parts.append("参考资料：Runbook {rb}，历史故障 {inc}。".format(**reference_ids))
        elif not levels & {"L0", "L1"}:
            parts.append(
                "说明：本次未检索到直接相关的内部文档，以上结论主要基于指标和日志推断，建议人工复核。"
            )
    else:
        parts = [f"Root cause:\n{words.cause.format(**ctx)}", f"Recommended steps:\n{steps}"]
        if "L0" in levels:
            parts.append("References: runbook {rb}, past incident {inc}.".format(**reference_ids))
        elif not levels & {"L0", "L1"}:
            parts.append(
                "Note: no directly relevant internal document was found; the conclusion "
                "above is inferred from metrics and logs and should be double-checked."
            )
    return "\n\n".join(parts)


def _feedback(rng: random.Random, invocations: tuple[DemoInvocation, ...]) -> str | None:
    levels = {inv.match_level for inv in invocations}
    # (useful, not_useful, none): better evidence, happier operators, mildly so.
    if "L0" in levels:
        weights = (52, 15, 33)
    elif "L1" in levels:
        weights = (42, 20, 38)
    else:
        weights = (24, 38, 38)
    return rng.choices(("useful", "not_useful", None), weights=weights)[0]


def demo_session_drawn(seed: int, index: int) -> tuple[Topic, DemoSession]:
    """Session `index` of `seed`, with the topic it was drawn from."""
    v = vocabulary_file()
    # A generator per session keeps session i identical whatever `count` is; the seed is
    # only demo determinism, not a secret.
    rng = random.Random(seed * 1_000_003 + index)  # noqa: S311
    zh = rng.random() < 0.55
    topic = rng.choice(topics())
    ctx = context(rng, topic)
    query = question(rng, topic, zh, ctx)

    roll = rng.random()
    status = "SUCCESS" if roll < 0.78 else "FAILED" if roll < 0.90 else "RUNNING"

    # Most sessions need 3-10 calls, a few give up at once and a few wander through 20+.
    count_weights = tools_file()["invocation_count_weights"]
    count = rng.choices(range(len(count_weights)), weights=count_weights)[0]
    if status == "RUNNING":
        # Still in progress: only part of the plan has run so far.
        count = rng.randint(0, count)
    all_failed_chance = {"FAILED": 0.20, "SUCCESS": 0.005, "RUNNING": 0.01}[status]
    if count and rng.random() < all_failed_chance:
        failure_rate = 1.0
    else:
        failure_rate = 0.16 if status == "FAILED" else 0.06
    invocations = _invocations(rng, topic, zh, ctx, count, failure_rate)

    answer = None
    feedback = None
    if status == "SUCCESS":
        answer = _answer(rng, topic, zh, ctx, invocations)
        feedback = _feedback(rng, invocations)

    if status == "RUNNING":
        days_ago = 0 if rng.random() < 0.7 else rng.randint(1, 2)
    else:
        # More recent days are busier, as with any growing user base.
        days_ago = rng.choices(range(30), weights=[60 - d for d in range(30)])[0]

    users = v["users"]
    pool, other = (users["zh"], users["en"]) if zh else (users["en"], users["zh"])
    user_roll = rng.random()
    if user_roll < 0.10:
        user_id = None
    elif user_roll < 0.85:
        user_id = rng.choice(pool)
    else:
        user_id = rng.choice(other)

    # Operators ask a little while after the incident time quoted in the question.
    incident_at = int(ctx["time"][:2]) * 60 + int(ctx["time"][3:])
    asked_at = min(1439, incident_at + rng.randint(3, 45))

    return topic, DemoSession(
        session_id=f"demo-{index + 1:04d}",
        user_id=user_id,
        query=query,
        status=status,
        answer=answer,
        invocations=invocations,
        feedback=feedback,
        days_ago=days_ago,
        minutes_into_day=asked_at,
    )


def demo_sessions(count: int = 300, *, seed: int = DEFAULT_SEED) -> list[DemoSession]:
    """Return `count` demo sessions; the same seed always yields the same sessions.

    Session i does not depend on `count`, so `demo_sessions(300)` is a prefix of
    `demo_sessions(500)`.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    return [demo_session_drawn(seed, index)[1] for index in range(count)]
