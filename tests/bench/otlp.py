"""OTLP ingest: spans/s of POST /v1/traces with 512-span protobuf batches, against a floor
view (/bench/otlp-floor) that decodes the same body and bulk-inserts the same rows.

Every request carries spans never sent before (fresh trace and span ids), so the real
endpoint stores each of them: nothing is skipped as a retry. Each batch holds 8 agent
runs of 64 spans (the agent, 31 model calls, 32 tool calls of which half are retrieval
with documents); the floor gets bodies of the same shape. The two are measured in
alternating rounds, each from `connections` keep-alive clients sending pre-built bodies.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from tests.bench import procs

SPANS_PER_BATCH = 512
RUNS_PER_BATCH = 8
ARGUMENTS = json.dumps({"query": "order-service 504 payment-gateway connection pool", "top_k": 5})
RESULT = json.dumps(["payment-gateway: connection pool exhausted, see runbook PG-504"] * 3)


def _template() -> Any:
    from tests.otlp import export, span

    spans = []
    start = time.time_ns()
    for run in range(RUNS_PER_BATCH):
        trace_id = bytes(16)
        root = span(
            "invoke_agent diagnosis-agent",
            trace_id=trace_id,
            span_id=bytes(8),
            start_ns=start,
            duration_ms=3000,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.conversation.id": f"run-{run}",
                "final_result": "payment-gateway 连接池耗尽：扩容连接池并加熔断。",
            },
        )
        spans.append(root)
        per_run = SPANS_PER_BATCH // RUNS_PER_BATCH
        for n in range(per_run - 1):
            if n % 2 == 0:
                attributes = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "local-model",
                    "gen_ai.input.messages": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": "504?"}]}]
                    ),
                    "gen_ai.usage.input_tokens": 812,
                }
                name = "chat local-model"
            else:
                tool = "QueryInternalDocsTools" if n % 4 == 1 else "QueryMetricsTools"
                attributes = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.arguments": ARGUMENTS,
                    "gen_ai.tool.call.result": RESULT,
                }
                if tool == "QueryInternalDocsTools":
                    attributes["diagnosis.tool.kind"] = "retrieval"
                name = f"execute_tool {tool}"
            spans.append(
                span(
                    name,
                    trace_id=trace_id,
                    span_id=bytes(8),
                    parent=bytes(8),
                    start_ns=start + n * 1_000_000,
                    duration_ms=20,
                    attributes=attributes,
                )
            )
    return export(*spans)


def bodies(count: int) -> list[bytes]:
    """`count` serialized batches of the template's shape, each with new ids."""
    template = _template()
    out = []
    per_run = SPANS_PER_BATCH // RUNS_PER_BATCH
    for _ in range(count):
        request = type(template)()
        request.CopyFrom(template)
        spans = request.resource_spans[0].scope_spans[0].spans
        for run in range(RUNS_PER_BATCH):
            trace_id = os.urandom(16)
            conversation = trace_id.hex()
            root_id = os.urandom(8)
            for index in range(run * per_run, (run + 1) * per_run):
                item = spans[index]
                item.trace_id = trace_id
                item.span_id = root_id if index == run * per_run else os.urandom(8)
                if index != run * per_run:
                    item.parent_span_id = root_id
                for attribute in item.attributes:
                    if attribute.key == "gen_ai.conversation.id":
                        attribute.value.string_value = conversation
        out.append(request.SerializeToString())
    return out


def send_all(url: str, path: str, batches: list[bytes], *, key: str, connections: int) -> dict:
    """Send every batch once from `connections` clients; spans/s over the wall time."""
    host, port = url.removeprefix("http://").split(":")
    queue = list(batches)
    lock = threading.Lock()
    failures: list[int] = []
    latencies: list[float] = []

    def client() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Api-Key {key}"}
        while True:
            with lock:
                if not queue:
                    break
                body = queue.pop()
            began = time.perf_counter()
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            with lock:
                latencies.append(time.perf_counter() - began)
                if response.status != 200:
                    failures.append(response.status)
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(connections)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    latencies.sort()
    return {
        "requests": len(batches),
        "spans": len(batches) * SPANS_PER_BATCH,
        "seconds": round(seconds, 2),
        "spans_per_second": round(len(batches) * SPANS_PER_BATCH / seconds),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 1),
        "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 1),
        "failures": failures[:10],
        "failed": len(failures),
    }


def run(
    *,
    env: dict[str, str],
    logs: Path,
    key: str,
    workers: int,
    requests: int,
    rounds: int,
    connections: int = 4,
) -> dict[str, Any]:
    from django.db import connection

    total = requests * rounds * 2 + 8
    all_bodies = bodies(total)
    warm, all_bodies = all_bodies[:8], all_bodies[8:]
    server_env = {**env, "OTLP_RATE_LIMIT": "100000/min"}
    endpoint_runs, floor_runs = [], []
    with procs.gunicorn(env=server_env, workers=workers, log=logs / "otlp-gunicorn.log") as server:
        send_all(server.url, "/v1/traces", warm[:4], key=key, connections=connections)
        send_all(server.url, "/bench/otlp-floor", warm[4:], key=key, connections=connections)
        for n in range(rounds):
            chunk = all_bodies[n * 2 * requests : (n + 1) * 2 * requests]
            floor_runs.append(
                send_all(
                    server.url,
                    "/bench/otlp-floor",
                    chunk[:requests],
                    key=key,
                    connections=connections,
                )
            )
            endpoint_runs.append(
                send_all(
                    server.url, "/v1/traces", chunk[requests:], key=key, connections=connections
                )
            )
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM otlp_span")
        stored = cursor.fetchone()[0]
    ratios = [
        e["spans_per_second"] / f["spans_per_second"]
        for e, f in zip(endpoint_runs, floor_runs, strict=True)
    ]
    ratios.sort()
    return {
        "batch_spans": SPANS_PER_BATCH,
        "connections": connections,
        "endpoint": endpoint_runs,
        "floor": floor_runs,
        "spans_per_second": sorted(r["spans_per_second"] for r in endpoint_runs)[
            len(endpoint_runs) // 2
        ],
        "floor_spans_per_second": sorted(r["spans_per_second"] for r in floor_runs)[
            len(floor_runs) // 2
        ],
        "ratio": round(ratios[len(ratios) // 2], 2),
        "spans_stored": stored,
        "valid": all(r["failed"] == 0 for r in endpoint_runs + floor_runs),
    }


def rows(result: dict[str, Any] | None, check: Any) -> list[Any]:
    from tests.bench.report import Row

    if not result:
        return []
    invalid = "" if result["valid"] else " INVALID"
    return [
        Row(
            f"POST /v1/traces, {result['batch_spans']}-span protobuf batches{invalid}",
            f"{result['spans_per_second']:,} spans/s",
            f"floor (decode + bulk insert) {result['floor_spans_per_second']:,} spans/s",
            f"{result['ratio']:.2f} x floor",
            ">= 0.5 x",
            check("otlp_ratio", result["ratio"], 0.5, at_most=False),
        ),
        Row(
            "  POST /v1/traces spans/s",
            f"{result['spans_per_second']:,} spans/s",
            "",
            "",
            ">= 10,000",
            check("otlp_spans_per_second", result["spans_per_second"], 10_000, at_most=False),
        ),
    ]
