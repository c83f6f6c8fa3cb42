"""The line saying an outage is over is written when the database (or the cache) has
really answered a request again, not at any successful answer: some answer 200 without
touching it (an empty OTLP export whose key is cached, the API schema).

The database is out of reach as in tests/test_outages.py: every query fails as the driver
says a lost server; the cache is a Redis address where nothing listens."""

import logging

import pytest
from django.db import OperationalError, connection
from django.test import Client

from tests.factories import DiagnosisSessionFactory
from tests.otlp import JSON, post

# Transactional: a test transaction left open would make the outage close the connection
# (config.middleware drops a connection not in its usual autocommit state).
pytestmark = pytest.mark.django_db(transaction=True)

UNREACHABLE_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
    }
}


def every_query_fails(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
    """The database gone: every query fails as the driver says a lost server."""
    raise OperationalError(2013, "Lost connection to server during query")


def _empty_export(key: str) -> int:
    """POST /v1/traces with an export holding no spans (OTLP JSON `{}`): nothing to store."""
    return post(Client(), b"{}", key=key, content_type=JSON).status_code


@pytest.fixture
def outage_log(monkeypatch, caplog):  # type: ignore[no-untyped-def]
    """A fresh outage log for the test; its lines as (level, message)."""
    from config import middleware

    monkeypatch.setattr(middleware, "_outage_log", middleware._OutageLog())
    caplog.set_level(logging.INFO)

    def lines() -> list[tuple[str, str]]:
        return [
            (record.levelname, record.getMessage())
            for record in caplog.records
            if record.name == "config.middleware"
        ]

    return lines


def test_an_empty_export_answered_while_the_database_is_down_does_not_say_it_is_back(
    api, outage_log
) -> None:
    DiagnosisSessionFactory(session_id="r-1")
    assert api.get("/api/sessions/r-1").status_code == 200  # the key is in the cache now

    with connection.execute_wrapper(every_query_fails):
        refused = api.get("/api/sessions/r-1").status_code
        empty_export = _empty_export(api.raw_key)

    assert (refused, empty_export) == (503, 200)
    [(level, message)] = outage_log()
    assert level == "ERROR"
    assert message.startswith("database unavailable: ")


def test_the_first_request_that_queries_the_database_after_an_outage_says_it_is_back(
    api, outage_log
) -> None:
    DiagnosisSessionFactory(session_id="r-2")
    assert api.get("/api/sessions/r-2").status_code == 200

    with connection.execute_wrapper(every_query_fails):
        refused = [api.get("/api/sessions/r-2").status_code for _ in range(3)]
        empty_export = _empty_export(api.raw_key)
    logged_during_the_outage = outage_log()
    served = api.get("/api/sessions/r-2").status_code

    assert (refused, empty_export, served) == ([503] * 3, 200, 200)
    assert [level for level, _message in logged_during_the_outage] == ["ERROR"]
    assert outage_log()[1:] == [
        ("WARNING", "database available again (2 more requests answered 503 since the last line)")
    ]


def test_an_answer_that_never_read_the_cache_does_not_say_the_cache_is_back(
    api, settings, outage_log
) -> None:
    DiagnosisSessionFactory(session_id="r-3")
    working_caches = settings.CACHES
    settings.CACHES = UNREACHABLE_CACHE

    refused = api.get("/api/sessions/r-3").status_code
    schema = Client().get("/api/schema").status_code  # no key, no rate limit: no cache read
    logged_before_the_cache_answers = outage_log()
    settings.CACHES = working_caches
    served = api.get("/api/sessions/r-3").status_code

    assert (refused, schema, served) == (503, 200, 200)
    assert [level for level, _message in logged_before_the_cache_answers] == ["ERROR"]
    assert outage_log()[1:] == [
        ("WARNING", "cache available again (0 more requests answered 503 since the last line)")
    ]


def test_a_request_that_read_the_cache_but_failed_on_the_database_does_not_say_the_cache_is_back(
    api, settings, outage_log
) -> None:
    DiagnosisSessionFactory(session_id="r-4")
    working_caches = settings.CACHES
    settings.CACHES = UNREACHABLE_CACHE
    assert api.get("/api/sessions/r-4").status_code == 503
    settings.CACHES = working_caches

    with connection.execute_wrapper(every_query_fails):
        # The cache answers (the key is not in it), then the database fails.
        assert api.get("/api/sessions/r-4").status_code == 503

    assert [message.split(":")[0] for _level, message in outage_log()] == [
        "cache unavailable",
        "database unavailable",
    ]
