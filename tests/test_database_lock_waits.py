"""A request that waits for a row another transaction holds gives up after
DB_LOCK_WAIT_TIMEOUT, before the connection's read timeout would cut it off: the client
gets the API's 503 to retry, and the log says a lock was waited for, not that the
database is unavailable (an operator would go looking for an outage)."""

import logging

import pytest
from django.db import connection
from django.test import Client

from tests.factories import DiagnosisSessionFactory
from tests.test_settings import load_settings, refusal

MARIADB = "mysql://root@127.0.0.1:3306/diagnosis"


def test_a_lock_wait_shorter_than_the_read_timeout_is_asked_of_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", DATABASE_URL=MARIADB)
    options = loaded["DATABASES"]["default"]["OPTIONS"]

    assert "innodb_lock_wait_timeout=20" in options["init_command"]


def test_a_lock_wait_the_read_timeout_would_cut_short_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = refusal(
        monkeypatch, DATABASE_URL=MARIADB, DB_LOCK_WAIT_TIMEOUT="30", DB_READ_TIMEOUT="30"
    )

    assert lines == [
        "DB_LOCK_WAIT_TIMEOUT (30) must be lower than DB_READ_TIMEOUT (30): a request waiting "
        "for a lock would be cut off as if the database were down"
    ]


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_the_server_holds_each_connection_to_the_lock_wait_of_the_settings() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@SESSION.innodb_lock_wait_timeout")
        assert cursor.fetchone()[0] == 20


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_a_completion_waiting_for_a_held_session_row_answers_503_and_logs_a_lock_wait(
    api, caplog: pytest.LogCaptureFixture
) -> None:
    DiagnosisSessionFactory(session_id="held-1")
    holder = connection.copy()
    holder.set_autocommit(False)
    holder.cursor().execute(
        "SELECT * FROM diagnosis_session WHERE session_id = 'held-1' FOR UPDATE"
    )
    with connection.cursor() as cursor:  # the request's connection (the same thread)
        cursor.execute("SET SESSION innodb_lock_wait_timeout = 1")
    try:
        with caplog.at_level(logging.WARNING):
            response = api.post(
                "/api/sessions/held-1/complete",
                {"status": "SUCCESS", "answer": "根因：磁盘写满。"},
                format="json",
            )
    finally:
        holder.rollback()
        holder.close()

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "service_unavailable"
    lines = [record.getMessage() for record in caplog.records]
    assert any(line.startswith("database lock wait: ") for line in lines), lines
    assert not any("database unavailable" in line for line in lines), lines
    # The connection is kept: the next request is served on it.
    assert api.get("/api/sessions/held-1").json()["status"] == "RUNNING"


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_an_otlp_export_waiting_for_a_held_session_row_answers_503_after_one_wait(
    make_client, caplog: pytest.LogCaptureFixture
) -> None:
    # Not retried as a lost race: five waits of DB_LOCK_WAIT_TIMEOUT outlasted gunicorn's
    # worker timeout, and the worker was killed without an answer.
    from tests.otlp import export, new_span_id, new_trace_id, post, span

    key = make_client("agent").raw_key
    DiagnosisSessionFactory(session_id="held-2")
    trace, root = new_trace_id(), new_span_id()
    body = export(
        span("invoke_agent", trace_id=trace, span_id=root, attributes={"session.id": "held-2"}),
        span(
            "execute_tool search",
            trace_id=trace,
            parent=root,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
        ),
    )
    holder = connection.copy()
    holder.set_autocommit(False)
    holder.cursor().execute(
        "SELECT * FROM diagnosis_session WHERE session_id = 'held-2' FOR UPDATE"
    )
    with connection.cursor() as cursor:
        cursor.execute("SET SESSION innodb_lock_wait_timeout = 1")
    try:
        with caplog.at_level(logging.WARNING):
            response = post(Client(), body, key=key)
    finally:
        holder.rollback()
        holder.close()

    assert response.status_code == 503
    assert response["Retry-After"]
    lines = [record.getMessage() for record in caplog.records]
    assert sum(line.startswith("database lock wait: ") for line in lines) == 1, lines
    assert not any("lost a race" in line for line in lines), lines


def test_a_lowered_read_timeout_lowers_the_default_lock_wait_below_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", DATABASE_URL=MARIADB, DB_READ_TIMEOUT="5")

    assert "innodb_lock_wait_timeout=4" in loaded["DATABASES"]["default"]["OPTIONS"]["init_command"]


def test_a_read_timeout_of_one_second_still_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", DATABASE_URL=MARIADB, DB_READ_TIMEOUT="1")

    assert "innodb_lock_wait_timeout=1" in loaded["DATABASES"]["default"]["OPTIONS"]["init_command"]
