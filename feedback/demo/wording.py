"""The demo's words: the JSON files beside this package, and what a session draws from them.

Pure standard library, like the rest of the session generator. The files are read once
per process (they ship with the code and never change while it runs). Templates are
`str.format` strings over the context that `context` draws for a session (`{service}`,
`{time}`, `{error_code}`, ...; `{{`/`}}` for a literal brace). The order of every list,
and of every draw, is part of what a seed produces.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# Found beside the module in the checkout the project runs from (nothing is installed).
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Language:
    questions: tuple[str, ...]
    keywords: tuple[str, ...]
    cause: str
    steps: tuple[str, ...]


@dataclass(frozen=True)
class Topic:
    key: str
    category: str
    services: tuple[str, ...]
    codes: tuple[str, ...]
    metric_queries: tuple[str, ...]
    log_queries: tuple[str, ...]
    zh: Language
    en: Language


def _read(name: str) -> Any:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


@cache
def vocabulary_file() -> dict[str, Any]:
    return _read("vocabulary.json")


@cache
def tools_file() -> dict[str, Any]:
    return _read("tools.json")


@cache
def topics() -> tuple[Topic, ...]:
    vocabulary = vocabulary_file()
    shared = vocabulary["shared_queries"]

    def queries(items: list[str]) -> tuple[str, ...]:
        return tuple(shared[q[1:]] if q.startswith("@") else q for q in items)

    def language(item: dict[str, Any]) -> Language:
        return Language(
            questions=tuple(item["questions"]),
            keywords=tuple(item["keywords"]),
            cause=item["cause"],
            steps=tuple(item["steps"]),
        )

    return tuple(
        Topic(
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


def weighted(rng: random.Random, weights_by_name: dict[str, float]) -> str:
    return rng.choices(list(weights_by_name), weights=list(weights_by_name.values()))[0]


def _k8s_suffix(rng: random.Random, length: int) -> str:
    alphabet = vocabulary_file()["k8s_alphabet"]
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


def context(rng: random.Random, topic: Topic) -> dict[str, str]:
    v = vocabulary_file()
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


def question(rng: random.Random, topic: Topic, zh: bool, ctx: dict[str, str]) -> str:
    # Operators often add a line of context; it is also what makes some questions long.
    phrasing = vocabulary_file()["phrasing"]["zh" if zh else "en"]
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


def tool_query(rng: random.Random, tool: str, topic: Topic, zh: bool, ctx: dict[str, str]) -> str:
    tools = tools_file()
    shared = vocabulary_file()["shared_queries"]
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
