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

Templates are `str.format` strings over the context that `_context` draws for a session
(`{service}`, `{time}`, `{error_code}`, ...; `{{`/`}}` for a literal brace). The order of
every list matters: it is part of what a seed produces.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["DemoInvocation", "DemoSession", "demo_sessions"]

# Found beside the module in the checkout the project runs from (nothing is installed).
HERE = Path(__file__).resolve().parent
DEFAULT_SEED = 20261202
_LEVELS = ("L0", "L1", "NONE")


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
    with `days_ago == 0` a loader should clamp the result to "now", since the time of
    day may still lie ahead.
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


@dataclass(frozen=True)
class _Language:
    questions: tuple[str, ...]
    keywords: tuple[str, ...]
    cause: str
    steps: tuple[str, ...]


@dataclass(frozen=True)
class _Topic:
    key: str
    category: str
    services: tuple[str, ...]
    codes: tuple[str, ...]
    metric_queries: tuple[str, ...]
    log_queries: tuple[str, ...]
    zh: _Language
    en: _Language


def _read(name: str) -> Any:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


@cache
def _vocabulary() -> dict[str, Any]:
    return _read("vocabulary.json")


@cache
def _tools() -> dict[str, Any]:
    return _read("tools.json")


@cache
def _topics() -> tuple[_Topic, ...]:
    vocabulary = _vocabulary()
    shared = vocabulary["shared_queries"]

    def queries(items: list[str]) -> tuple[str, ...]:
        return tuple(shared[q[1:]] if q.startswith("@") else q for q in items)

    def language(item: dict[str, Any]) -> _Language:
        return _Language(
            questions=tuple(item["questions"]),
            keywords=tuple(item["keywords"]),
            cause=item["cause"],
            steps=tuple(item["steps"]),
        )

    return tuple(
        _Topic(
            key=item["key"],
            category=item["category"],
            services=tuple(item.get("services") or vocabulary["services"]),
            codes=tuple(item["codes"]),
            metric_queries=queries(item["metric_queries"]),
            log_queries=queries(item["log_queries"]),
            zh=language(item["zh"]),
            en=language(item["en"]),
        )
        for item in _read("topics.json")
    )


def _weighted(rng: random.Random, weights_by_name: dict[str, float]) -> str:
    return rng.choices(list(weights_by_name), weights=list(weights_by_name.values()))[0]


def _k8s_suffix(rng: random.Random, length: int) -> str:
    alphabet = _vocabulary()["k8s_alphabet"]
    return "".join(rng.choice(alphabet) for _ in range(length))


def _version(rng: random.Random) -> tuple[str, str]:
    major, minor, patch = rng.randint(1, 3), rng.randint(0, 24), rng.randint(0, 9)
    old = f"v{major}.{minor}.{patch}"
    new = f"v{major}.{minor + 1}.0" if rng.random() < 0.6 else f"v{major}.{minor}.{patch + 1}"
    return old, new


def _zh_when(rng: random.Random, hour: int, hhmm: str) -> str:
    if hour < 6:
        part = "凌晨"
    elif hour < 12:
        part = "上午"
    elif hour < 18:
        part = "下午"
    else:
        part = "晚上"
    day = rng.choice(("今天", "今天", "", "昨天" if hour >= 18 else "今天"))
    return f"{day}{part} {hhmm}"


def _en_when(rng: random.Random, hour: int, hhmm: str) -> str:
    if hour >= 19 and rng.random() < 0.4:
        return f"last night around {hhmm}"
    return rng.choice((f"around {hhmm}", f"at {hhmm} today", f"shortly after {hhmm}"))


def _context(rng: random.Random, topic: _Topic) -> dict[str, str]:
    v = _vocabulary()
    service = rng.choice(topic.services)
    service2 = rng.choice([s for s in v["services"] if s != service])
    prefix = service.split("-")[0]
    namespace = rng.choice(v["namespaces"])
    cluster = rng.choice(v["clusters"])
    # Incidents cluster in busy hours but do wake people up at night.
    hour = rng.randint(9, 23) if rng.random() < 0.75 else rng.randint(0, 8)
    hhmm = f"{hour:02d}:{rng.randrange(0, 60, 5):02d}"
    baseline = rng.choice((45, 60, 80, 120, 150, 200))
    old_version, new_version = _version(rng)
    rate_limit = rng.choice((50, 100, 200, 500, 1000))
    # The dict's order is the order of the draws: keep it.
    ctx = {
        "service": service,
        "service2": service2,
        "namespace": namespace,
        "cluster": cluster,
        "pod": f"{service}-{_k8s_suffix(rng, 10)}-{_k8s_suffix(rng, 5)}",
        "node": f"node-{rng.choice(v['node_zones'])}-{rng.randint(1, 48):02d}",
        "time": hhmm,
        "when_zh": _zh_when(rng, hour, hhmm),
        "when_en": _en_when(rng, hour, hhmm),
        "db_instance": f"mysql-{prefix}-{rng.choice(('master', 'primary'))}-0{rng.randint(1, 4)}",
        # Table names follow the owning service, so a question about payment-gateway
        # does not suddenly talk about the inventory schema.
        "table": rng.choice(v["tables"].get(prefix, (f"t_{prefix}_record",))),
        "baseline": str(baseline),
        "p99": str(baseline * rng.randint(8, 40)),
        "pct": f"{rng.uniform(2.5, 45.0):.1f}",
        "lag_s": str(rng.choice((45, 120, 300, 900, 1800, 3600))),
        "pool_size": str(rng.choice((20, 30, 50, 100))),
        "waiting": str(rng.randint(40, 400)),
        "disk_pct": str(rng.randint(91, 100)),
        "mount": rng.choice(v["mounts"]),
        "cpu_limit": rng.choice(("1", "2", "4")),
        "mem_limit": rng.choice(("512Mi", "1Gi", "2Gi", "4Gi")),
        "heap": rng.choice(("2g", "4g", "6g", "8g")),
        "gc_pause": str(rng.choice((800, 1200, 2500, 4000))),
        "old_version": old_version,
        "new_version": new_version,
        "release": f"{service}-{namespace}",
        "chart_version": f"{rng.randint(0, 3)}.{rng.randint(1, 30)}.{rng.randint(0, 9)}",
        "ready": "",
        "replicas": "",
        "flag": rng.choice(v["flags"]),
        "rollout_pct": str(rng.choice((5, 10, 20, 50))),
        "config_key": rng.choice(v["config_keys"]),
        "redis": f"redis-{prefix}-cache-0{rng.randint(1, 6)}",
        "kafka_topic": rng.choice((f"{prefix}-events", f"{prefix}.status.changed", "trade-events")),
        "consumer_group": f"{service}-consumer",
        "kafka_lag": f"{rng.randint(20, 3000) * 1000:,}",
        "partner": rng.choice(v["partners"]),
        "rate_limit": str(rate_limit),
        "qps": str(int(rate_limit * rng.uniform(1.3, 4.0))),
        "lb": rng.choice(v["load_balancers"]),
        "domain": rng.choice(v["domains"]),
        "dep_host": f"{service2}.{namespace}.svc.cluster.local",
        "loss": str(rng.choice((2, 3, 5, 8, 12, 20))),
        "class_name": f"com.example.{prefix}.{rng.choice(v['class_names'])}",
        "npe_rate": str(rng.choice((40, 120, 300, 850, 2000))),
        "leak_mb": str(rng.choice((150, 200, 300, 500))),
    }
    replicas = rng.choice((4, 6, 8, 12, 20))
    ctx["replicas"] = str(replicas)
    ctx["ready"] = str(rng.randint(1, replicas - 1))
    # Some codes embed other fields (e.g. the lag), so they are formatted last.
    ctx["error_code"] = rng.choice(topic.codes).format(**ctx)
    return ctx


def _question(rng: random.Random, topic: _Topic, zh: bool, ctx: dict[str, str]) -> str:
    # Operators often add a line of context; it is also what makes some questions long.
    phrasing = _vocabulary()["phrasing"]["zh" if zh else "en"]
    body = rng.choice((topic.zh if zh else topic.en).questions).format(**ctx)
    if zh:
        # Suffixes depend on whether the question already ends with a question mark.
        suffixes = phrasing["suffixes_after_question" if body.endswith("？") else "suffixes"]
        text = rng.choice(phrasing["prefixes"]) + body + rng.choice(suffixes)
        if rng.random() < 0.08:
            sep = "" if text.endswith(("。", "？", "，")) else "。"
            text += sep + rng.choice(phrasing["extras"]).format(**ctx)
        return text
    text = rng.choice(phrasing["prefixes"]) + body + rng.choice(phrasing["suffixes"])
    if rng.random() < 0.08:
        sep = " " if text.endswith((".", "?", "!")) else ". "
        text += sep + rng.choice(phrasing["extras"]).format(**ctx)
    return text


def _tool_query(rng: random.Random, tool: str, topic: _Topic, zh: bool, ctx: dict[str, str]) -> str:
    tools = _tools()
    shared = _vocabulary()["shared_queries"]
    if tool in tools["retrieval_tools"]:
        # Agents sometimes search in English even for a Chinese question.
        use_zh = zh and rng.random() < 0.85
        templates = tools["retrieval_queries"]["zh" if use_zh else "en"][tool]
        keyword = rng.choice((topic.zh if use_zh else topic.en).keywords)
        return rng.choice(templates).format(kw=keyword, **ctx)
    if tool == "QueryMetricsTools":
        return rng.choice(topic.metric_queries or (shared["p99"],)).format(**ctx)
    if tool == "QueryLogsTools":
        return rng.choice(topic.log_queries or (shared["log_errors"],)).format(**ctx)
    if tool == "DateTimeTools":
        return rng.choice(tools["datetime_queries"]).format(**ctx)
    return rng.choice(tools["topology_queries"]).format(**ctx)


def _duration(rng: random.Random, tool: str) -> int:
    median = _tools()["median_ms"][tool]
    return max(20, min(8000, int(median * rng.lognormvariate(0.0, 0.6))))


def _invocations(
    rng: random.Random,
    topic: _Topic,
    zh: bool,
    ctx: dict[str, str],
    count: int,
    failure_rate: float,
) -> tuple[DemoInvocation, ...]:
    tools = _tools()
    # Evidence quality is decided per session, not per call: otherwise every session
    # with a handful of retrieval calls would land an L0 hit and the feedback split by
    # evidence would be flat.
    profiles = tools["evidence_profiles"]
    profile = rng.choices(
        [[p["weights"][level] for level in _LEVELS] for p in profiles],
        weights=[p["share"] for p in profiles],
    )[0]
    calls = []
    for n in range(1, count + 1):
        retrieval = rng.random() >= 0.25
        if retrieval:
            tool = _weighted(rng, tools["retrieval_tools"])
        elif n == 1 and rng.random() < 0.5:
            # Resolving "since 14:05" into a time range is a natural first step.
            tool = "DateTimeTools"
        else:
            tool = _weighted(rng, tools["other_tools"])
        query = _tool_query(rng, tool, topic, zh, ctx)
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
            match_level = rng.choices(_LEVELS, weights=profile)[0]
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
    topic: _Topic,
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


def _build(seed: int, index: int) -> tuple[_Topic, DemoSession]:
    v = _vocabulary()
    # A generator per session keeps session i identical whatever `count` is; the seed is
    # only demo determinism, not a secret.
    rng = random.Random(seed * 1_000_003 + index)  # noqa: S311
    zh = rng.random() < 0.55
    topic = rng.choice(_topics())
    ctx = _context(rng, topic)
    query = _question(rng, topic, zh, ctx)

    roll = rng.random()
    status = "SUCCESS" if roll < 0.78 else "FAILED" if roll < 0.90 else "RUNNING"

    # Most sessions need 3-10 calls, a few give up at once and a few wander through 20+.
    count_weights = _tools()["invocation_count_weights"]
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
    return [_build(seed, index)[1] for index in range(count)]


# `python -m feedback.demo.sessions`: the mix the vocabulary gives, after an edit.


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
    built = [_build(DEFAULT_SEED, index) for index in range(300)]
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
        _LEVELS,
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
    templates = sum(len(t.zh.questions) + len(t.en.questions) for t in _topics())
    print(f"questions > 100 chars: {long_queries}; distinct question templates: {templates}")
    print(f"distinct questions: {len({s.query for s in sessions})} / {len(sessions)}")
    if problems:
        print("PROBLEMS:")
        for problem in problems[:20]:
            print(f"  {problem}")
        raise SystemExit(1)
    print("all checks passed")
