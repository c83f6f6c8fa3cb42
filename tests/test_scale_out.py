"""Scale-out, proven: two web nodes and two worker nodes on the Redis broker against one
MariaDB database, each web/worker pair in a network namespace of its own on this
machine; mixed load at both web nodes; one worker node killed (SIGKILL) mid-backlog.

What must hold afterwards: every completed session is scored, with the one result the
rules give (a task redelivered or swept writes the same value again; the test counts
those writes and shows them), every feedback is kept, and every useful session has
exactly one case. When namespaces cannot be made here, the nodes run on loopback ports
instead, and the test says so.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest
from django.db import connection

from tests.processes import ROOT, child_env, free_port, http_ok, post_json, stop_group, wait_for
from tests.redis_databases import redis_db

pytestmark = [
    pytest.mark.mysql,
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

SESSIONS = 120
REDIS_DB = redis_db("scale_out")


@dataclass
class Node:
    name: str
    namespace: str | None
    host_ip: str  # where this node reaches MariaDB and Redis
    node_ip: str  # where the test reaches this node's web server
    web_port: int
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://{self.node_ip}:{self.web_port}"

    def command(self, *args: str) -> list[str]:
        prefix = ["ip", "netns", "exec", self.namespace] if self.namespace else []
        return [*prefix, *args]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _make_namespaces(tag: str) -> list[Node] | None:
    """Two namespaces joined to the host by veth pairs; None when this machine says no."""
    nodes = []
    try:
        for n, name in enumerate(("a", "b"), start=1):
            namespace = f"dq{tag}{name}"
            host_if, node_if = f"vh{tag}{name}", f"vn{tag}{name}"
            subnet = f"10.231.{(int(tag, 16) % 100) * 2 + n}"
            _ip("netns", "add", namespace)
            nodes.append(Node(name, namespace, f"{subnet}.1", f"{subnet}.2", 8000))
            _ip("link", "add", host_if, "type", "veth", "peer", "name", node_if)
            _ip("link", "set", node_if, "netns", namespace)
            _ip("addr", "add", f"{subnet}.1/30", "dev", host_if)
            _ip("link", "set", host_if, "up")
            _ip("netns", "exec", namespace, "ip", "addr", "add", f"{subnet}.2/30", "dev", node_if)
            _ip("netns", "exec", namespace, "ip", "link", "set", node_if, "up")
            _ip("netns", "exec", namespace, "ip", "link", "set", "lo", "up")
    except (subprocess.CalledProcessError, FileNotFoundError, PermissionError):
        _remove_namespaces(nodes)
        return None
    return nodes


def _remove_namespaces(nodes: list[Node]) -> None:
    # Deleting a namespace removes the veth pair with it.
    for node in nodes:
        if node.namespace:
            subprocess.run(["ip", "netns", "delete", node.namespace], capture_output=True)


@pytest.fixture
def database(tmp_path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    name = f"{connection.settings_dict['NAME']}_scale_{uuid.uuid4().hex[:6]}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    try:
        yield name
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.fixture
def cluster(tmp_path, database):  # type: ignore[no-untyped-def]
    tag = uuid.uuid4().hex[:4]
    nodes = _make_namespaces(tag)
    isolated = nodes is not None
    if nodes is None:
        print("network namespaces could not be made here: nodes on loopback ports instead")
        nodes = [Node(n, None, "127.0.0.1", "127.0.0.1", free_port()) for n in ("a", "b")]
    db = connection.settings_dict
    log = (tmp_path / "cluster.log").open("w")
    relay = None
    try:
        if isolated:
            pairs = [
                f"{node.host_ip}:{port}=127.0.0.1:{target}"
                for node in nodes
                for port, target in ((13306, db["PORT"] or 3306), (16379, 6379))
            ]
            relay = subprocess.Popen(
                [sys.executable, str(ROOT / "tests" / "tcp_relay.py"), *pairs],
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )
            assert relay.stdout.readline().strip() == "ready"
        mysql_port, redis_port = (13306, 16379) if isolated else (db["PORT"] or 3306, 6379)
        cluster_name = f"scale-{tag}"
        common = dict(
            Q_CLUSTER_NAME=cluster_name,
            Q_WORKERS="2",
            Q_TIMEOUT="5",
            Q_RETRY="6",
            Q_SAVE_LIMIT="-1",
            SCORING_SWEEP_AFTER="5",
            READYZ_WORKER_MAX_AGE="0",
            ALLOWED_HOSTS=",".join(n.node_ip for n in nodes),
            OPINION_PROVIDER="off",
            LOG_FORMAT="plain",
        )
        local = child_env(
            DATABASE_URL=f"mysql://root@127.0.0.1:{db['PORT'] or 3306}/{database}", **common
        )
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT,
            env=local,
            check=True,
            capture_output=True,
            timeout=300,
        )
        key = subprocess.run(
            [sys.executable, "manage.py", "create_api_key", "scale", "--scope", "full"],
            cwd=ROOT,
            env=local,
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
        for node in nodes:
            env = child_env(
                DATABASE_URL=f"mysql://root@{node.host_ip}:{mysql_port}/{database}",
                Q_REDIS_URL=f"redis://{node.host_ip}:{redis_port}/{REDIS_DB}",
                **common,
            )
            node.processes["worker"] = subprocess.Popen(
                node.command(sys.executable, "manage.py", "qcluster"),
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            node.processes["web"] = subprocess.Popen(
                node.command(
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "config.wsgi",
                    "--bind",
                    f"{node.node_ip}:{node.web_port}",
                    "--workers",
                    "2",
                ),
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        for node in nodes:
            wait_for(lambda n=node: http_ok(f"{n.base}/healthz"), timeout=60, what="a web node")
        yield nodes, key, isolated
    finally:
        for node in nodes:
            for process in node.processes.values():
                stop_group(process, timeout=10)
        if relay is not None:
            stop_group(relay, timeout=5)
        if isolated:
            _remove_namespaces(nodes)
        subprocess.run(["redis-cli", "-n", REDIS_DB, "FLUSHDB"], capture_output=True)
        log.close()


def _get(url: str, key: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Api-Key {key}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_two_nodes_score_every_session_once_keep_every_feedback_and_one_case_each(
    cluster, database
) -> None:
    nodes, key, isolated = cluster
    a, b = nodes
    with connection.cursor() as cursor:
        # Every write of a score, counted by the database itself.
        cursor.execute(
            f"CREATE TABLE `{database}`.score_write (session_id VARCHAR(64), "
            "evaluation LONGTEXT, written_at DATETIME(6))"
        )
        cursor.execute(
            f"CREATE TRIGGER `{database}`.count_score_writes AFTER UPDATE ON "
            f"`{database}`.diagnosis_session FOR EACH ROW BEGIN IF NEW.self_evaluation IS NOT "
            "NULL AND (OLD.self_evaluation IS NULL OR NEW.self_evaluation <> "
            "OLD.self_evaluation OR NEW.updated_at <> OLD.updated_at AND "
            "JSON_EXTRACT(NEW.self_evaluation, '$.evidence_score') IS NOT NULL AND "
            "NEW.feedback <=> OLD.feedback) THEN INSERT INTO "
            f"`{database}`.score_write VALUES (NEW.session_id, NEW.self_evaluation, NOW(6)); "
            "END IF; END"
        )
    ids = [f"s-{n:04d}" for n in range(SESSIONS)]
    wanted = {sid: ("useful", "not_useful", None)[n % 3] for n, sid in enumerate(ids)}
    rng = random.Random(7)

    def node_for(n: int):  # type: ignore[no-untyped-def]
        return nodes[n % 2]

    def start(n: int, sid: str) -> None:
        status, _ = post_json(
            f"{node_for(n).base}/api/sessions", {"sessionId": sid, "query": "q"}, key=key
        )
        assert status == 201
        calls = [
            {
                "invocationId": f"{sid}-{k}",
                "toolName": "QueryInternalDocsTools",
                "status": "SUCCESS",
                "matchLevel": "L0" if k == 0 else "NONE",
            }
            for k in range(3)
        ]
        status, _ = post_json(
            f"{node_for(n + 1).base}/api/sessions/{sid}/tool-invocations", calls, key=key
        )
        assert status == 201

    def complete(n: int, sid: str) -> None:
        body = {"status": "SUCCESS", "answer": f"根因：{sid}"}
        status, _ = post_json(f"{node_for(n).base}/api/sessions/{sid}/complete", body, key=key)
        assert status == 200

    def feedback(n: int, sid: str) -> None:
        value = wanted[sid]
        if value is None:
            return
        # The same feedback at both nodes at once: a race the unique key must decide.
        for node in (a, b) if value == "useful" else (node_for(n),):
            status, body = post_json(
                f"{node.base}/api/feedback", {"sessionId": sid, "feedback": value}, key=key
            )
            assert status == 200, body

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda p: start(*p), enumerate(ids)))
        completions = [pool.submit(complete, n, sid) for n, sid in enumerate(ids)]
        # Mid-backlog: worker node A is killed outright while completions are queued.
        time.sleep(0.3)
        os.killpg(a.processes["worker"].pid, signal.SIGKILL)
        killed_at = time.monotonic()
        for future in completions:
            future.result()
        order = list(enumerate(ids))
        rng.shuffle(order)
        list(pool.map(lambda p: feedback(*p), order))

    def unscored() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT COUNT(*) FROM `{database}`.diagnosis_session WHERE self_evaluation IS NULL"
            )
            return cursor.fetchone()[0]

    # Node B's workers drain the queue; tasks node A held when it died are swept.
    wait_for(lambda: unscored() == 0, timeout=150, what="every session to be scored")
    recovered_after = time.monotonic() - killed_at

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT session_id, self_evaluation, feedback FROM `{database}`.diagnosis_session"
        )
        sessions = {sid: (json.loads(e), f) for sid, e, f in cursor.fetchall()}
        cursor.execute(
            f"SELECT session_id, COUNT(*), COUNT(DISTINCT evaluation) FROM "
            f"`{database}`.score_write GROUP BY session_id"
        )
        writes = {sid: (count, distinct) for sid, count, distinct in cursor.fetchall()}
        cursor.execute(
            f"SELECT diagnosis_id, COUNT(*) FROM `{database}`.case_library GROUP BY diagnosis_id"
        )
        cases = dict(cursor.fetchall())

    assert set(sessions) == set(ids)
    assert all(evaluation["evidence_score"] == 65 for evaluation, _ in sessions.values())
    assert all(writes[sid][1] == 1 for sid in ids)  # one result per session, however written
    assert {sid: f for sid, (_, f) in sessions.items()} == wanted
    useful = {sid for sid, value in wanted.items() if value == "useful"}
    assert cases == dict.fromkeys(useful, 1)
    rewritten = sum(1 for sid in ids if writes[sid][0] > 1)
    print(
        f"{'namespaces' if isolated else 'loopback ports'}: {SESSIONS} sessions, every one "
        f"scored ({rewritten} written more than once, with the same result), "
        f"{len(useful)} cases, recovered {recovered_after:.0f}s after the kill"
    )
