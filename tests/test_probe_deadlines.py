"""/readyz and the /metrics scrape answer within PROBE_DB_DEADLINE_SECONDS when their
database reads do not: a database that hangs reads as unreachable, the read is left to end
in the probe thread, and a probe never queues behind an earlier one."""

import contextlib
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import OperationalError, connection, connections
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from config import deadline, health, metrics_scrape
from config.deadline import DeadlineMissed, within_deadline
from evaluation.models import WorkerHeartbeat
from tests.metrics_samples import parse, scrape
from tests.processes import child_database_url, child_env, start_gunicorn, stop_group, wait_for
from tests.redis_databases import redis_url
from tests.test_settings import load_settings, refusal

# The probe thread's own connection reads the tables the test wrote: committed, not in the
# test's transaction (which would keep the read in the caller's thread, config/deadline.py).
pytestmark = pytest.mark.django_db(transaction=True)

# A read held past its deadline is released by its test; this long at most, so that a
# probe that waits it out (no deadline) fails its test rather than hanging the suite.
HELD_AT_MOST = 20


class Hold:
    """A read that blocks until released: a database that hangs, for the probe thread."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.entered = threading.Event()

    def check(self) -> str:
        self.entered.set()
        self.released.wait(HELD_AT_MOST)
        return "ok"


@pytest.fixture
def hold() -> Iterator[Hold]:
    held = Hold()
    yield held
    held.released.set()
    _wait_for_the_probe_thread()


def _wait_for_the_probe_thread() -> None:
    # The next test starts with the thread free, as a process that was not probed yet.
    if deadline.DATABASE.pending is not None:
        deadline.DATABASE.pending.exception()


@pytest.fixture(autouse=True)
def _fresh_probe_state(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(health, "_failing", frozenset())
    monkeypatch.setattr(metrics_scrape, "_broker_failures", metrics_scrape.RepeatedFailures())


# --- The helper ----------------------------------------------------------------------


def test_a_read_that_ends_within_the_deadline_gives_its_result() -> None:
    assert within_deadline(lambda: 42, seconds=HELD_AT_MOST) == 42


def test_a_read_s_error_reaches_the_caller() -> None:
    def fails() -> None:
        raise OperationalError(2013, "Lost connection to server during query")

    with pytest.raises(OperationalError, match="Lost connection"):
        within_deadline(fails, seconds=HELD_AT_MOST)


def test_a_read_past_the_deadline_is_answered_as_timed_out_and_ends_in_the_background(
    hold: Hold,
) -> None:
    with pytest.raises(DeadlineMissed, match=r"^timed out after 0\.2 s$"):
        within_deadline(hold.check, seconds=0.2)

    hold.released.set()
    _wait_for_the_probe_thread()
    assert within_deadline(lambda: "free again", seconds=HELD_AT_MOST) == "free again"


def test_while_an_earlier_read_still_runs_a_new_one_is_answered_at_once_and_never_run(
    hold: Hold,
) -> None:
    ran: list[str] = []
    with pytest.raises(DeadlineMissed):
        within_deadline(hold.check, seconds=0.2)

    with pytest.raises(DeadlineMissed, match=r"^still waiting for an earlier check$"):
        within_deadline(lambda: ran.append("second"), seconds=HELD_AT_MOST)

    hold.released.set()
    _wait_for_the_probe_thread()
    assert ran == []


def raw_connection() -> object:
    connection.ensure_connection()
    return connection.connection


def lose_the_connection() -> None:
    connection.ensure_connection()
    raise OperationalError(2013, "Lost connection to server during query")


def test_the_probe_thread_keeps_its_connection_after_a_read_and_reconnects_after_a_failure(
    monkeypatch,
) -> None:
    # Kept as a request's would be: for CONN_MAX_AGE (SQLite's settings say 0).
    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 60)
    first = within_deadline(raw_connection, seconds=HELD_AT_MOST)
    second = within_deadline(raw_connection, seconds=HELD_AT_MOST)
    with pytest.raises(OperationalError):
        within_deadline(lose_the_connection, seconds=HELD_AT_MOST)
    after_the_failure = within_deadline(raw_connection, seconds=HELD_AT_MOST)

    assert second is first
    assert after_the_failure is not first
    assert first is not connection.connection  # the thread's own, not the caller's


# --- /readyz ---------------------------------------------------------------------------


def test_readyz_whose_database_read_hangs_answers_not_ready_timed_out_at_the_deadline(
    settings, hold: Hold
) -> None:
    settings.PROBE_DB_DEADLINE_SECONDS = 1

    response = health.readiness_response(extra={"slow": hold.check})

    assert response.status_code == 503
    assert json.loads(response.content)["checks"] == {
        "database": "timed out after 1 s",
        "migrations": "unknown",
        "slow": "unknown",
        "cache": "ok",
    }


def test_readyz_while_the_earlier_read_still_hangs_says_so_and_is_ready_once_it_ends(
    settings, hold: Hold
) -> None:
    settings.PROBE_DB_DEADLINE_SECONDS = 1
    health.readiness_response(extra={"slow": hold.check})

    waiting = health.readiness_response(extra={"slow": hold.check})
    hold.released.set()
    _wait_for_the_probe_thread()
    again = health.readiness_response(extra={"slow": hold.check})

    assert waiting.status_code == 503
    assert json.loads(waiting.content)["checks"]["database"] == (
        "still waiting for an earlier check"
    )
    assert again.status_code == 200


def test_readyz_reads_the_database_in_the_probe_thread_on_sqlite_too(client) -> None:
    WorkerHeartbeat.objects.create(host="worker-a", beat_at=timezone.now())

    response = client.get("/readyz")

    assert response.status_code == 200
    assert response.json()["checks"] == {
        "database": "ok",
        "migrations": "ok",
        "worker": "ok",
        "cache": "ok",
    }


# --- /metrics --------------------------------------------------------------------------


class HeldCollector(Collector):
    """An app's scrape-time collector whose database read hangs until released."""

    def __init__(self, held: Hold) -> None:
        self.held = held

    def collect(self) -> Iterator[GaugeMetricFamily]:
        self.held.check()
        yield GaugeMetricFamily("diagnosis_held", "Read once the hold is released.", value=1)


@pytest.fixture
def held_scrape(monkeypatch, settings, hold: Hold) -> Callable[[], dict]:  # type: ignore[no-untyped-def]
    settings.PROBE_DB_DEADLINE_SECONDS = 1
    monkeypatch.setattr(metrics_scrape, "SCRAPE_COLLECTORS", [*metrics_scrape.SCRAPE_COLLECTORS])
    metrics_scrape.SCRAPE_COLLECTORS.append(HeldCollector(hold))
    return scrape


def test_a_scrape_whose_database_read_hangs_answers_with_the_queue_down_and_no_db_gauges(
    held_scrape: Callable[[], dict], caplog
) -> None:
    WorkerHeartbeat.objects.create(host="worker-a", beat_at=timezone.now())

    samples = held_scrape()

    assert samples[("diagnosis_queue_up", ())] == 0
    names = {name for name, _labels in samples}
    assert "diagnosis_queue_waiting_tasks" not in names
    assert "diagnosis_worker_heartbeat_age_seconds" not in names
    assert "diagnosis_held" not in names
    assert "timed out after 1 s" in caplog.text


def test_a_scrape_while_the_earlier_read_still_hangs_answers_at_once_then_reads_all_again(
    held_scrape: Callable[[], dict], hold: Hold
) -> None:
    WorkerHeartbeat.objects.create(host="worker-a", beat_at=timezone.now())
    held_scrape()

    waiting = held_scrape()
    hold.released.set()
    _wait_for_the_probe_thread()
    again = held_scrape()

    assert waiting[("diagnosis_queue_up", ())] == 0
    assert again[("diagnosis_queue_up", ())] == 1
    assert ("diagnosis_worker_heartbeat_age_seconds", ()) in again
    assert again[("diagnosis_held", ())] == 1


# --- Settings --------------------------------------------------------------------------


def test_the_probes_database_deadline_is_3_seconds_unless_set(monkeypatch) -> None:
    monkeypatch.delenv("PROBE_DB_DEADLINE_SECONDS", raising=False)

    assert load_settings(monkeypatch, DEBUG="1")["PROBE_DB_DEADLINE_SECONDS"] == 3
    assert (
        load_settings(monkeypatch, DEBUG="1", PROBE_DB_DEADLINE_SECONDS="5")[
            "PROBE_DB_DEADLINE_SECONDS"
        ]
        == 5
    )


@pytest.mark.parametrize("value", ["0", "soon", "2.5"])
def test_a_deadline_that_is_not_a_whole_number_of_seconds_is_refused_at_start_up(
    monkeypatch, value: str
) -> None:
    lines = refusal(monkeypatch, PROBE_DB_DEADLINE_SECONDS=value)

    assert [line for line in lines if line.startswith("PROBE_DB_DEADLINE_SECONDS must be")]


@pytest.mark.parametrize("value", ["1", "60", "119"])
def test_a_worker_max_age_below_two_heartbeats_is_refused_at_start_up(
    monkeypatch, value: str
) -> None:
    lines = refusal(monkeypatch, READYZ_WORKER_MAX_AGE=value)

    assert lines == [
        "READYZ_WORKER_MAX_AGE must be 0 (the heartbeat's age is only reported) or >= 120 "
        f"(two heartbeats: the worker sends one every 60 s), got {value}"
    ]


@pytest.mark.parametrize("value", ["0", "120", "600"])
def test_a_worker_max_age_of_0_or_two_heartbeats_and_more_is_taken(monkeypatch, value: str) -> None:
    settings = load_settings(monkeypatch, DEBUG="1", READYZ_WORKER_MAX_AGE=value)

    assert settings["READYZ_WORKER_MAX_AGE"] == int(value)


# --- Under gunicorn, on a database that hangs --------------------------------------------


class Relay:
    """A TCP relay to the database that can stop forwarding: the connections stay up and
    nothing answers, as when the server hangs."""

    def __init__(self, host: str, port: int, *, listen_on: int = 0) -> None:
        self.target = (host, port)
        self.forwarding = threading.Event()
        self.forwarding.set()
        self.listener = socket.create_server(("127.0.0.1", listen_on))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _address = self.listener.accept()
                server = socket.create_connection(self.target)
            except OSError:
                return  # closed
            self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                self.forwarding.wait()
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.forwarding.set()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.mysql
def test_under_gunicorn_a_hung_database_is_not_ready_at_once_and_liveness_still_answers(
    tmp_path,
) -> None:
    db = connection.settings_dict
    relay = Relay(db["HOST"] or "127.0.0.1", int(db["PORT"] or 3306))
    through_relay = child_database_url().replace(
        f"@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}/", f"@127.0.0.1:{relay.port}/"
    )
    env = child_env(
        DATABASE_URL=through_relay,
        PROBE_DB_DEADLINE_SECONDS="1",
        # Longer than any probe waits: only the deadline can answer while the server hangs.
        DB_READ_TIMEOUT="50",
        DB_CONNECT_TIMEOUT="5",
        READYZ_WORKER_MAX_AGE="0",
    )
    with (tmp_path / "gunicorn.log").open("w") as log:
        web, base = start_gunicorn(env, workers=2, log=log)
        try:
            wait_for(lambda: get(f"{base}/readyz")[0] == 200, timeout=60, what="ready")
            relay.forwarding.clear()
            with ThreadPoolExecutor(max_workers=2) as pool:
                held = [pool.submit(get, f"{base}/readyz") for _ in range(2)]
                probes = [future.result() for future in held]
                probes += [get(f"{base}/readyz") for _ in range(3)]
            healthz = get(f"{base}/healthz")
            scrape_status, scrape_body = get(f"{base}/metrics")
            hanging = not relay.forwarding.is_set()
            relay.forwarding.set()
            wait_for(lambda: get(f"{base}/readyz")[0] == 200, timeout=120, what="ready again")
        finally:
            stop_group(web)
            relay.close()

    assert hanging  # every answer above came while the database still hung
    assert {status for status, _body in probes} == {503}
    assert {json.loads(body)["checks"]["database"] for _status, body in probes} <= {
        "timed out after 1 s",
        "still waiting for an earlier check",
    }
    assert healthz[0] == 200
    assert scrape_status == 200
    samples = parse(scrape_body)
    assert samples[("diagnosis_queue_up", ())] == 0
    assert ("diagnosis_queue_waiting_tasks", ()) not in samples


@pytest.fixture
def redis_broker(monkeypatch):  # type: ignore[no-untyped-def]
    """django-q2 configured for the Redis broker (Q_REDIS_URL), on a database of its own."""
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "ORM", None)
    monkeypatch.setattr(Conf, "REDIS", redis_url("environments"))


def test_with_the_redis_broker_a_hanging_database_leaves_the_queue_readable(
    redis_broker: None, held_scrape: Callable[[], dict]
) -> None:
    samples = held_scrape()

    assert samples[("diagnosis_database_up", ())] == 0
    assert samples[("diagnosis_queue_up", ())] == 1
    assert ("diagnosis_queue_waiting_tasks", ()) in samples
    assert "diagnosis_held" not in {name for name, _labels in samples}


def test_a_broker_that_cannot_be_read_is_logged_with_the_scrape_s_request_id(
    monkeypatch, json_lines
) -> None:
    from django_q.conf import Conf

    from tests.processes import free_port

    monkeypatch.setattr(Conf, "ORM", None)
    monkeypatch.setattr(Conf, "REDIS", f"redis://127.0.0.1:{free_port()}/0")

    samples = scrape(HTTP_X_REQUEST_ID="scrape-42")

    assert samples[("diagnosis_queue_up", ())] == 0
    lines = [json.loads(line) for line in json_lines]
    [warning] = [line for line in lines if "broker could not be read" in line["message"]]
    assert warning["request_id"] == "scrape-42"
