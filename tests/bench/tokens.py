"""POST /api/feedback with a feedback token against the same request with an API key.

Both mark a fresh session not_useful (pools "token_not_useful" and "key_not_useful", the
same kind of sessions), under the production rate limits set high enough never to be
hit. Rounds alternate key, token, key, ...: each token round is compared with the key
rounds before and after it, so the load other work puts on a shared machine cancels out.
Target: the token path at >= 0.9 x the key path's requests per second.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.core import signing

from diagnosis.feedback_tokens import SALT
from tests.bench import load, procs
from tests.bench.dataset import POOL_WIDTH, Pool

LIMITS = {
    "FEEDBACK_TOKEN_RATE_LIMIT": "5000/s",
    "FEEDBACK_ADDRESS_RATE_LIMIT": "5000/s",
}


def write_tokens(pool: Pool, *, secret: str, path: Path) -> None:
    """One token per line, for the pool's sessions in order (signed as the server signs)."""
    with path.open("w") as out:
        for n in range(pool.size):
            token = signing.dumps(pool.session_id(n), key=secret, salt=SALT, compress=False)
            out.write(token + "\n")


def run(
    *,
    pools: dict[str, Pool],
    env: dict[str, str],
    logs: Path,
    key: str,
    seconds: float,
    warmup_seconds: float,
    rounds: int,
    workers: int,
    connections: int,
    log: Any,
) -> dict[str, Any]:
    tokens_file = logs / "feedback-tokens.txt"
    token_pool, key_pool = pools["token_not_useful"], pools["key_not_useful"]
    write_tokens(token_pool, secret=env["SECRET_KEY"], path=tokens_file)

    def spec(name: str, pool: Pool, script: str, extra: dict[str, str]) -> load.LoadSpec:
        return load.LoadSpec(
            name, script, pool.prefix, POOL_WIDTH, pool.size, unique=True, extra=extra
        )

    token_spec = spec(
        "feedback_token", token_pool, "feedback_token.lua", {"TOKENS": str(tokens_file)}
    )
    key_spec = spec("feedback_key", key_pool, "feedback.lua", {"FEEDBACK": "not_useful"})
    # The first 10% of each pool warms up; the rest is cut into the measured rounds.
    token_slices = load.rounds_of(_skip(token_spec, 0.1), rounds + 1)
    key_slices = load.rounds_of(_skip(key_spec, 0.1), rounds + 2)
    wrk_log = logs / "wrk-tokens.log"
    with procs.gunicorn(
        env={**env, **LIMITS}, workers=workers, log=logs / "gunicorn-tokens.log"
    ) as server:

        def wrk(one: load.LoadSpec, label: str, length: float) -> dict[str, Any]:
            result = load.run_wrk(
                one,
                url=server.url,
                key=key,
                seconds=length,
                threads=2,
                connections=connections,
                nonce=uuid.uuid4().hex[:8],
                log=wrk_log,
            )
            problems = result.problems(unique=True)
            log(
                f"  {label:24} {result.rps:8,.0f} rps  p50 {result.p50_ms:6.1f} ms  "
                f"p99 {result.p99_ms:6.1f} ms"
                + (f"  PROBLEMS: {'; '.join(problems)}" if problems else "")
            )
            return {**asdict(result), "valid": result.valid and not problems, "problems": problems}

        wrk(_head(key_spec, 0.1), "feedback_key (warm-up)", warmup_seconds)
        wrk(_head(token_spec, 0.1), "feedback_token (warm-up)", warmup_seconds)
        key_runs = [wrk(key_slices[0], "feedback_key", seconds)]
        token_runs = []
        for n in range(rounds):
            token_runs.append(wrk(token_slices[n], "feedback_token", seconds))
            key_runs.append(wrk(key_slices[n + 1], "feedback_key", seconds))
    combined = load.combine(token_runs, key_runs, seconds=seconds)
    combined["note"] = "ratio_rps: token rps / the key rounds beside it (median of rounds)"
    return combined


def _head(spec: load.LoadSpec, share: float) -> load.LoadSpec:
    return load.LoadSpec(**{**spec.__dict__, "count": int(spec.count * share)})


def _skip(spec: load.LoadSpec, share: float) -> load.LoadSpec:
    start = int(spec.count * share)
    return load.LoadSpec(
        **{
            **spec.__dict__,
            "count": spec.count - start,
            "extra": {**spec.extra, "START": str(start)},
        }
    )
