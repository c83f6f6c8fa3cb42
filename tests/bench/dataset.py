"""A data set at scale, bulk-loaded: sessions, tool invocations, scores, feedback, cases.

Rows are made in plain Python (no ORM objects) and loaded with `LOAD DATA LOCAL INFILE`
on MySQL/MariaDB, with unique and foreign-key checks off for the load; other databases
get multi-row INSERTs. A second process makes the next chunk while the database loads
the current one.

Distributions (per body session): 78% SUCCESS / 12% FAILED / 10% RUNNING; about ten
invocations on average, skewed (5% none, an exponential tail past 50, 2% of sessions
where every call failed); per call 9% FAILED, 25% kind `other`, successful retrievals
25% L0 / 35% L1 / 40% NONE. Finished sessions carry the score the rule engine gives
their facts. About 60% of SUCCESS sessions have feedback, two thirds of it `useful`
(each with its AUTO case); some FAILED ones are `not_useful`; a third of the bad cases
have a review.

Pools reserved for the load runs (ids by prefix, so a wrk script can walk them):
first-useful and not_useful (SUCCESS, no feedback), repeated useful (already useful,
with a case), RUNNING sessions for invocation batches, RUNNING sessions to complete
for scoring, and one SUCCESS session with exactly 200 invocations for the admin's
detail page. `pools_reset` puts them back, so a run can reuse a generated data set.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evaluation.rules import InvocationFacts, evaluate

BODY_PREFIX = "s"
BODY_WIDTH = 8
POOL_WIDTH = 7
REFERENCE_SESSIONS = 10_000
CHUNK_SESSIONS = 50_000
DETAIL_SESSION = "pd0000000"
DETAIL_INVOCATIONS = 200
DETAIL_WORD = "zzyzx-detail"  # in the detail session's question and no other


@dataclass(frozen=True)
class Pool:
    prefix: str
    size: int
    purpose: str

    def session_id(self, n: int) -> str:
        return f"{self.prefix}{n:0{POOL_WIDTH}d}"


def pools_for(*, feedback_pool: int, scoring_pool: int) -> dict[str, Pool]:
    return {
        "first_useful": Pool("pu", feedback_pool, "SUCCESS, no feedback: first useful"),
        "not_useful": Pool("pn", feedback_pool, "SUCCESS, no feedback: not_useful"),
        "not_useful_again": Pool(
            "pm", feedback_pool, "SUCCESS, no feedback: not_useful beside its same-work floor"
        ),
        "not_useful_floor": Pool("pz", feedback_pool, "SUCCESS, no feedback: not_useful floor"),
        "useful_floor": Pool("pf", feedback_pool, "SUCCESS, no feedback: the useful floor"),
        "repeat_useful": Pool("pr", 2_000, "already useful, with a case: repeated useful"),
        # POST /api/feedback with a feedback token against the same with an API key: three
        # times the pool, for rounds alternating between the two (tests/bench/tokens.py).
        "token_not_useful": Pool("pt", 3 * feedback_pool, "SUCCESS, no feedback: token not_useful"),
        "key_not_useful": Pool("pk", 3 * feedback_pool, "SUCCESS, no feedback: key not_useful"),
        "invocations": Pool("pi", 2_000, "RUNNING: invocation batches"),
        "scoring": Pool("pq", scoring_pool, "RUNNING with facts: completed to be scored"),
    }


def body_session_id(n: int) -> str:
    return f"{BODY_PREFIX}{n:0{BODY_WIDTH}d}"


# --- Vocabulary ---------------------------------------------------------------------

_SERVICES = (
    "order-service",
    "payment-gateway",
    "user-center",
    "inventory-api",
    "cart-service",
    "coupon-service",
    "search-api",
    "risk-engine",
    "logistics-tracker",
    "billing-worker",
)
_SYMPTOMS = (
    "大量 504，怎么排查？",
    "P99 延迟从 80ms 涨到 2s，慢日志里全是 t_order 的查询，是缺索引吗？",
    "Pod 反复 OOMKilled，重启后十分钟又挂，先看哪里？",
    "连接池耗尽，报 HikariPool-1 - Connection is not available",
    "Kafka 消费延迟持续升高，lag 超过 50 万",
    "发布后 5xx 比例升到 3%，要不要回滚？",
    "Redis 超时告警，RT 抖动明显",
    "DNS 解析偶发失败，调用下游报 UnknownHostException",
)
_ANSWER_PARTS = (
    "根因：下游 payment-gateway 连接池耗尽，请求在线程池里排队直至超时。",
    "1. 扩容连接池到 50，并把 readTimeout 从 30s 降到 3s；",
    "2. 给调用加熔断（失败率 50% 打开，30s 半开）；",
    "3. 检查慢查询：t_order(status, created_at) 缺复合索引，EXPLAIN 显示全表扫描；",
    "4. 观察 15 分钟 P99 与错误率，确认恢复后再恢复流量。",
    "参考 runbook：https://wiki.example.com/sre/runbooks/connection-pool",
)
_RETRIEVAL_TOOLS = ("QueryInternalDocsTools", "SearchRunbookTools", "QueryCaseLibraryTools")
_OTHER_TOOLS = ("QueryMetricsTools", "QueryLogsTools", "QueryK8sEventsTools")
_USERS = ("ops.zhangwei", "sre.wangfang", "dba.zhaolei", "oncall.chenjie", "sre.alice", None)
_CATEGORIES = ("DATABASE", "NETWORK", "CAPACITY", "DEPLOYMENT_CONFIG", "DEPENDENCY")
_ERRORS = ("timeout after 30000 ms", "HTTP 502 from upstream", "index not found")

_STATUS_WEIGHTS = (("SUCCESS", 78), ("FAILED", 12), ("RUNNING", 10))
_STATUSES = [status for status, weight in _STATUS_WEIGHTS for _ in range(weight)]


def _call_shape(rng: random.Random) -> tuple[str, str, str | None]:
    """(status, kind, match_level) of one tool call."""
    kind = "other" if rng.random() < 0.25 else "retrieval"
    if rng.random() < 0.09:
        return "FAILED", kind, None
    if kind == "other":
        return "SUCCESS", kind, None
    roll = rng.random()
    return "SUCCESS", kind, "L0" if roll < 0.25 else "L1" if roll < 0.60 else "NONE"


def _calls_count(rng: random.Random) -> int:
    if rng.random() < 0.05:
        return 0
    return min(1 + int(rng.expovariate(1 / 9.5)), 300)


# --- Row shapes (column order of each table's load) ---------------------------------

SESSION_COLUMNS = (
    "session_id",
    "user_id",
    "query",
    "status",
    "answer",
    "self_evaluation",
    "feedback",
    "created_at",
    "updated_at",
    "finished_at",
    "feedback_at",
)
INVOCATION_COLUMNS = (
    "session_id",
    "invocation_id",
    "tool_name",
    "kind",
    "status",
    "match_level",
    "hit_count",
    "query",
    "error_message",
    "duration_ms",
    "created_at",
)
CASE_COLUMNS = (
    "case_id",
    "diagnosis_id",
    "source_type",
    "fault_category",
    "error_code",
    "title",
    "root_cause",
    "solution",
    "created_by",
    "updated_by",
    "created_at",
    "updated_at",
)
REVIEW_COLUMNS = ("session_id", "state", "note", "reviewed_by", "reviewed_at")
TABLES = {
    "diagnosis_session": SESSION_COLUMNS,
    "tool_invocation": INVOCATION_COLUMNS,
    "case_library": CASE_COLUMNS,
    "bad_case_review": REVIEW_COLUMNS,
}


class Rows:
    """The rows of one chunk, per table."""

    def __init__(self) -> None:
        self.by_table: dict[str, list[tuple]] = {table: [] for table in TABLES}

    def extend(self, other: Rows) -> None:
        for table, rows in other.by_table.items():
            self.by_table[table].extend(rows)

    def counts(self) -> dict[str, int]:
        return {table: len(rows) for table, rows in self.by_table.items()}


_SCORES: dict[tuple, str] = {}


def _score_json(status: str, calls: list[tuple[str, str, str | None]]) -> str:
    facts = InvocationFacts.from_calls(calls)
    key = (status, facts.total, facts.successful, facts.retrieval, facts.l0_hits, facts.l1_hits)
    if key not in _SCORES:
        # json.dumps as Django's JSONField writes it, so stored scores compare equal.
        _SCORES[key] = json.dumps(evaluate(session_status=status, facts=facts))
    return _SCORES[key]


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _session(
    rows: Rows,
    rng: random.Random,
    *,
    session_id: str,
    created: datetime,
    status: str,
    calls: list[tuple[str, str, str | None]],
    feedback: str | None,
    review: bool = False,
    question_tail: str = "",
) -> None:
    service = rng.choice(_SERVICES)
    query = f"{service} {rng.choice(_SYMPTOMS)}{question_tail}"
    finished = created + timedelta(seconds=rng.randint(5, 300)) if status != "RUNNING" else None
    answer = "\n".join(rng.sample(_ANSWER_PARTS, 4)) if status == "SUCCESS" else None
    score = _score_json(status, calls) if status != "RUNNING" else None
    feedback_at = finished + timedelta(minutes=rng.randint(1, 600)) if feedback else None
    updated = feedback_at or finished or created
    rows.by_table["diagnosis_session"].append(
        (
            session_id,
            rng.choice(_USERS),
            query,
            status,
            answer,
            score,
            feedback,
            _ts(created),
            _ts(updated),
            _ts(finished) if finished else None,
            _ts(feedback_at) if feedback_at else None,
        )
    )
    for i, (call_status, kind, level) in enumerate(calls):
        tools = _RETRIEVAL_TOOLS if kind == "retrieval" else _OTHER_TOOLS
        rows.by_table["tool_invocation"].append(
            (
                session_id,
                f"{session_id}-{i}",
                tools[i % len(tools)],
                kind,
                call_status,
                level,
                rng.randint(1, 8) if level in ("L0", "L1") else 0,
                f"{service} {kind} query {i}",
                rng.choice(_ERRORS) if call_status == "FAILED" else None,
                rng.randint(5, 3000),
                _ts(created + timedelta(milliseconds=200 * i)),
            )
        )
    if feedback == "useful":
        curated = rng.random() < 0.4
        rows.by_table["case_library"].append(
            (
                str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                session_id,
                "AUTO",
                rng.choice(_CATEGORIES) if curated else "GENERAL",
                f"E{rng.randint(1000, 9999)}" if curated else None,
                query[:100],
                answer,
                answer,
                "system",
                rng.choice(_USERS[:-1]) if curated else "system",
                _ts(feedback_at),  # type: ignore[arg-type]
                _ts(feedback_at),  # type: ignore[arg-type]
            )
        )
    if feedback == "not_useful" and review:
        state = rng.choice(("triaged", "resolved"))
        rows.by_table["bad_case_review"].append(
            (session_id, state, "checked the evidence trail", "sre.alice", _ts(feedback_at))  # type: ignore[arg-type]
        )


def body_rows(start: int, stop: int, *, total: int, seed: int, now: datetime) -> Rows:
    """Body sessions [start, stop) of `total`, spread over the year before `now`."""
    rng = random.Random(f"{seed}:{start}")
    rows = Rows()
    step = timedelta(days=365) / max(total, 1)
    origin = now - timedelta(days=365)
    for n in range(start, stop):
        status = rng.choice(_STATUSES)
        count = _calls_count(rng)
        if count and rng.random() < 0.02:
            calls = [("FAILED", "retrieval", None)] * count
        else:
            calls = [_call_shape(rng) for _ in range(count)]
        feedback = None
        if status == "SUCCESS" and rng.random() < 0.6:
            feedback = "useful" if rng.random() < 2 / 3 else "not_useful"
        elif status == "FAILED" and rng.random() < 0.1:
            feedback = "not_useful"
        _session(
            rows,
            rng,
            session_id=body_session_id(n),
            created=origin + step * n,
            status=status,
            calls=calls,
            feedback=feedback,
            review=rng.random() < 1 / 3,
        )
    return rows


def detail_rows(*, now: datetime) -> Rows:
    """The admin detail page's session: SUCCESS, not_useful, exactly 200 invocations."""
    rng = random.Random("detail")
    rows = Rows()
    calls = [_call_shape(rng) for _ in range(DETAIL_INVOCATIONS)]
    _session(
        rows,
        rng,
        session_id=DETAIL_SESSION,
        created=now - timedelta(hours=2),
        status="SUCCESS",
        calls=calls,
        feedback="not_useful",
        # A word no other question holds: the admin's search for a rare word finds it.
        question_tail=f" {DETAIL_WORD}",
    )
    return rows


def pool_rows(pools: dict[str, Pool], *, now: datetime) -> Rows:
    rng = random.Random("pools")
    rows = Rows()
    created = now - timedelta(hours=1)
    for name, pool in pools.items():
        for n in range(pool.size):
            calls = [_call_shape(rng) for _ in range(_calls_count(rng))]
            if name in (
                "first_useful",
                "not_useful",
                "not_useful_again",
                "not_useful_floor",
                "useful_floor",
                "repeat_useful",
                "token_not_useful",
                "key_not_useful",
            ):
                status = "SUCCESS"
            else:
                status = "RUNNING"
                if name == "invocations":
                    calls = calls[:2]
            _session(
                rows,
                rng,
                session_id=pool.session_id(n),
                created=created,
                status=status,
                calls=calls,
                feedback="useful" if name == "repeat_useful" else None,
            )
    return rows


# --- Loading ------------------------------------------------------------------------


def _escape(value: object) -> str:
    if value is None:
        return "\\N"
    text = str(value)
    if "\\" in text or "\t" in text or "\n" in text:
        text = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return text


def write_tsv(rows: Rows, directory: str) -> dict[str, str]:
    """One tab-separated file per table, in LOAD DATA's default escaping."""
    paths = {}
    for table, table_rows in rows.by_table.items():
        if not table_rows:
            continue
        path = os.path.join(directory, f"{table}.tsv")
        with open(path, "w", encoding="utf-8", newline="\n") as out:
            out.writelines("\t".join(map(_escape, row)) + "\n" for row in table_rows)
        paths[table] = path
    return paths


def _body_chunk_files(start: int, stop: int, total: int, seed: int, now: datetime) -> tuple:
    rows = body_rows(start, stop, total=total, seed=seed, now=now)
    directory = tempfile.mkdtemp(prefix=f"bench-{start}-")
    return directory, write_tsv(rows, directory), rows.counts()


class Loader:
    """Bulk loads into the configured database."""

    def __init__(self) -> None:
        from django.db import connection

        self.vendor = connection.vendor
        self._raw = self._mysql_connection() if self.vendor == "mysql" else None

    @staticmethod
    def _mysql_connection():  # type: ignore[no-untyped-def]
        import MySQLdb
        from django.conf import settings

        db = settings.DATABASES["default"]
        raw = MySQLdb.connect(
            host=db["HOST"] or "127.0.0.1",
            port=int(db["PORT"] or 3306),
            user=db["USER"],
            passwd=db["PASSWORD"] or "",
            db=db["NAME"],
            charset="utf8mb4",
            local_infile=1,
        )
        cursor = raw.cursor()
        # Generated rows are consistent by construction; checking each one costs more
        # than the load itself.
        cursor.execute("SET SESSION unique_checks = 0, foreign_key_checks = 0")
        cursor.execute("SET SESSION time_zone = '+00:00'")
        return raw

    def truncate(self) -> None:
        from django.db import connection

        tables = [
            "otlp_span",
            "tool_catalog",
            # The case library's search index and what points at its cases: a run on a
            # database an earlier run used must not search that run's passages too.
            "case_search_hit",
            "case_search",
            "case_reuse",
            "case_duplicate",
            "case_merge",
            "case_import_source",
            "case_passage",
            "case_search_key",
            "case_index_log",
            *reversed(TABLES),
            "case_structuring",
            # After case_library: on SQLite, deleting its rows fires the change triggers.
            "case_change",
            "django_q_ormq",
        ]
        tables.append("django_q_task")
        if self.vendor == "mysql":
            cursor = self._raw.cursor()
            for table in tables:
                cursor.execute(f"TRUNCATE TABLE `{table}`")
            return
        with connection.cursor() as cursor:
            for table in tables:
                cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")

    def load_files(self, paths: dict[str, str]) -> None:
        cursor = self._raw.cursor()
        for table in TABLES:  # sessions before the rows that point at them
            if table in paths:
                columns = ", ".join(f"`{c}`" for c in TABLES[table])
                cursor.execute(
                    f"LOAD DATA LOCAL INFILE %s INTO TABLE `{table}` CHARACTER SET utf8mb4 "
                    f"FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' ({columns})",
                    [paths[table]],
                )
        self._raw.commit()

    def load_rows(self, rows: Rows) -> None:
        if self.vendor == "mysql":
            directory = tempfile.mkdtemp(prefix="bench-rows-")
            try:
                self.load_files(write_tsv(rows, directory))
            finally:
                shutil.rmtree(directory, ignore_errors=True)
            return
        from django.db import connection, transaction

        with transaction.atomic(), connection.cursor() as cursor:
            for table, columns in TABLES.items():
                table_rows = rows.by_table[table]
                sql = (
                    f"INSERT INTO {connection.ops.quote_name(table)} ({', '.join(columns)}) "
                    f"VALUES ({', '.join(['%s'] * len(columns))})"
                )
                for i in range(0, len(table_rows), 5_000):
                    cursor.executemany(sql, table_rows[i : i + 5_000])

    def close(self) -> None:
        if self._raw is not None:
            self._raw.close()


@dataclass
class GenerationReport:
    sessions: int = 0
    invocations: int = 0
    cases: int = 0
    reviews: int = 0
    seconds: float = 0.0
    reference_seconds: float = 0.0

    def add(self, counts: dict[str, int]) -> None:
        self.sessions += counts["diagnosis_session"]
        self.invocations += counts["tool_invocation"]
        self.cases += counts["case_library"]
        self.reviews += counts["bad_case_review"]


def generate(
    *,
    sessions: int,
    pools: dict[str, Pool],
    seed: int = 7,
    at_reference: Callable[[], None] | None = None,
    log: Callable[[str], None] = print,
) -> GenerationReport:
    """Replace the data set with `sessions` body sessions plus the pools.

    The first REFERENCE_SESSIONS body sessions (and the detail session) are loaded first
    and `at_reference` is called then, so figures "at 10,000 sessions" come from the
    same run and the same machine as the figures at full scale.
    """
    now = datetime.now(UTC).replace(tzinfo=None)
    report = GenerationReport()
    started = time.monotonic()
    loader = Loader()
    try:
        loader.truncate()
        first = min(sessions, REFERENCE_SESSIONS)
        head = body_rows(0, first, total=sessions, seed=seed, now=now)
        head.extend(detail_rows(now=now))
        loader.load_rows(head)
        report.add(head.counts())
        report.reference_seconds = time.monotonic() - started
        if at_reference is not None:
            paused = time.monotonic()
            at_reference()
            started += time.monotonic() - paused
        tail = pool_rows(pools, now=now)
        loader.load_rows(tail)
        report.add(tail.counts())
        for counts in _load_body(loader, first, sessions, seed=seed, now=now, log=log):
            report.add(counts)
    finally:
        loader.close()
    _analyze()
    report.seconds = time.monotonic() - started
    return report


def _load_body(
    loader: Loader, start: int, total: int, *, seed: int, now: datetime, log: Callable
) -> Iterator[dict[str, int]]:
    chunks = [(a, min(a + CHUNK_SESSIONS, total)) for a in range(start, total, CHUNK_SESSIONS)]
    if not chunks:
        return
    if loader.vendor != "mysql":
        for a, b in chunks:
            rows = body_rows(a, b, total=total, seed=seed, now=now)
            loader.load_rows(rows)
            yield rows.counts()
        return
    # One process makes chunk n+1 (CPU) while the database loads chunk n.
    with ProcessPoolExecutor(max_workers=1) as pool:
        pending: list[Future] = []
        upcoming = iter(chunks)
        for a, b in upcoming:
            pending.append(pool.submit(_body_chunk_files, a, b, total, seed, now))
            if len(pending) == 2:
                break
        done_sessions = start
        began = time.monotonic()
        while pending:
            directory, paths, counts = pending.pop(0).result()
            nxt = next(upcoming, None)
            if nxt is not None:
                pending.append(pool.submit(_body_chunk_files, *nxt, total, seed, now))
            try:
                loader.load_files(paths)
            finally:
                shutil.rmtree(directory, ignore_errors=True)
            done_sessions += counts["diagnosis_session"]
            rate = (done_sessions - start) / (time.monotonic() - began)
            log(f"  loaded {done_sessions:,}/{total:,} body sessions ({rate:,.0f}/s)")
            yield counts


def _analyze() -> None:
    from django.db import connection

    if connection.vendor != "mysql":
        return
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"ANALYZE TABLE `{table}`")
            cursor.fetchall()


# --- Reuse --------------------------------------------------------------------------


def pools_reset(pools: dict[str, Pool]) -> None:
    """Put the pools back as generated, so every run does the real write paths."""
    from django.db import connection, transaction

    def prefix_range(pool: Pool) -> tuple[str, str]:
        return pool.session_id(0), pool.session_id(pool.size - 1)

    with transaction.atomic(), connection.cursor() as cursor:
        for name in (
            "first_useful",
            "not_useful",
            "not_useful_again",
            "not_useful_floor",
            "useful_floor",
            "token_not_useful",
            "key_not_useful",
        ):
            low, high = prefix_range(pools[name])
            # The proposals of the pool's cases first (no foreign key would take them).
            cursor.execute(
                "DELETE FROM case_structuring WHERE case_id IN (SELECT case_id FROM "
                "case_library WHERE diagnosis_id BETWEEN %s AND %s)",
                [low, high],
            )
            cursor.execute(
                "DELETE FROM case_library WHERE diagnosis_id BETWEEN %s AND %s", [low, high]
            )
            cursor.execute(
                "UPDATE diagnosis_session SET feedback = NULL, feedback_at = NULL "
                "WHERE session_id BETWEEN %s AND %s AND feedback IS NOT NULL",
                [low, high],
            )
        low, high = prefix_range(pools["invocations"])
        # Keep the two generated calls of each session, drop what load runs added.
        cursor.execute(
            "DELETE FROM tool_invocation WHERE session_id BETWEEN %s AND %s "
            "AND invocation_id NOT LIKE 'pi%%'",
            [low, high],
        )
    scoring_reset(pools["scoring"])


def scoring_reset(pool: Pool) -> None:
    """The scoring pool RUNNING again, and an empty task queue."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE diagnosis_session SET status = 'RUNNING', answer = NULL, "
            "finished_at = NULL, self_evaluation = NULL "
            "WHERE session_id BETWEEN %s AND %s AND status <> 'RUNNING'",
            [pool.session_id(0), pool.session_id(pool.size - 1)],
        )
        cursor.execute("DELETE FROM django_q_ormq")
        cursor.execute("DELETE FROM django_q_task")
    # The generated cases and those the load step made are the data set, not work for
    # the scoring step's worker: its structuring pass starts after them.
    from django.utils import timezone

    from caselibrary.models import CaseIndexState

    CaseIndexState.objects.update_or_create(id=1, defaults={"structured_until": timezone.now()})


def counts() -> dict[str, int]:
    """Exact row counts (one-off, after generation)."""
    from django.db import connection

    result = {}
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
            result[table] = cursor.fetchone()[0]
    return result


def cleanup_temp() -> None:
    for leftover in Path(tempfile.gettempdir()).glob("bench-*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
