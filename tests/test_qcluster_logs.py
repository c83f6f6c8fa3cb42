"""The worker's lines during an outage: django-q2's own messages in English whatever
LANGUAGE_CODE is (the admin keeps its language), and a message repeated at every poll of
the broker written once a minute, with how many were left out."""

import json
import logging
import multiprocessing

import pytest
from django.utils import translation
from django.utils.translation import gettext as _

from config import queue_logging

queue_logger = logging.getLogger("django-q")


@pytest.fixture(autouse=True)
def _a_fresh_worker_process(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(queue_logging, "_repeats", queue_logging.SharedRepeats())


def entries(json_lines: list[str]) -> list[dict]:
    return [e for e in map(json.loads, json_lines) if e["logger"] == "django-q"]


def test_django_q2s_own_messages_are_logged_in_english_under_a_chinese_language_code(
    json_lines, settings
) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    with translation.override("zh-hans"):
        message = _("reincarnated pusher %(name)s after sudden death") % {"name": "Process-1a2b"}
        assert message != "reincarnated pusher Process-1a2b after sudden death"
        queue_logger.critical(message)

    [entry] = entries(json_lines)
    assert entry["message"] == "reincarnated pusher Process-1a2b after sudden death"
    assert entry["level"] == "CRITICAL"


def test_the_admin_keeps_its_language(admin_client, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"
    queue_logger.error("Failed to pull task from broker")

    response = admin_client.get("/admin/")

    assert response.headers["Content-Language"] == "zh-hans"


def test_a_message_repeated_at_every_poll_is_written_once_in_its_interval(json_lines) -> None:
    for _poll in range(60):
        queue_logger.error("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    assert len(entries(json_lines)) == 1


def test_messages_that_differ_only_by_a_process_name_count_as_one(json_lines) -> None:
    for name in ("Process-ed9b91d5310c40b6", "Process-04f7eeeaf3954437", "Process-5e0ac9c5"):
        queue_logger.critical(f"reincarnated pusher {name} after sudden death")

    assert len(entries(json_lines)) == 1


def test_the_next_line_after_the_interval_says_how_many_were_left_out(
    json_lines, monkeypatch
) -> None:
    for _poll in range(5):
        queue_logger.error("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
    monkeypatch.setattr(queue_logging, "REPEAT_LOG_SECONDS", 0.0)

    queue_logger.error("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    _first, later = entries(json_lines)
    assert later["message"] == (
        "Error 111 connecting to 127.0.0.1:6379. Connection refused. (4 more since the last line)"
    )
    assert later["repeats"] == 4


def test_a_lost_connection_is_one_line_without_a_traceback(json_lines) -> None:
    try:
        raise ConnectionError("Connection closed by server.")
    except ConnectionError:
        queue_logger.exception("Failed to pull task from broker")

    [entry] = entries(json_lines)
    assert entry["message"] == (
        "Failed to pull task from broker: ConnectionError: Connection closed by server."
    )
    assert "exception" not in entry


def test_a_failing_task_keeps_its_traceback(json_lines) -> None:
    try:
        raise ValueError("bad input")
    except ValueError:
        queue_logger.exception("Could not save task result")

    [entry] = entries(json_lines)
    assert "ValueError: bad input" in entry["exception"]


def test_different_messages_are_each_written(json_lines) -> None:
    queue_logger.error("Failed to pull task from broker")
    queue_logger.error("Could not create task from schedule")

    assert len(entries(json_lines)) == 2


def _log_refused_connection() -> None:
    queue_logger.error("Failed to pull task from broker: ConnectionError: refused")


def test_a_line_one_process_of_the_cluster_wrote_is_left_out_by_the_next_one_forked(
    json_lines,
) -> None:
    # django-q2 forks a new pusher after each failure; each would write the line first.
    pusher = multiprocessing.get_context("fork").Process(target=_log_refused_connection)
    pusher.start()
    pusher.join()

    _log_refused_connection()

    assert pusher.exitcode == 0
    assert entries(json_lines) == []


@pytest.fixture
def logging_set_up_again():  # type: ignore[no-untyped-def]
    # django.setup() run again in one process (importing config.wsgi does) adds a second
    # filter to the logger, beside the first.
    from django.conf import settings as django_settings
    from django.utils.log import configure_logging

    configure_logging(django_settings.LOGGING_CONFIG, django_settings.LOGGING)


def test_a_line_is_still_written_once_after_the_logging_is_set_up_again(
    logging_set_up_again, json_lines
) -> None:
    queue_logger.error("Failed to pull task from broker")

    assert [e["message"] for e in entries(json_lines)] == ["Failed to pull task from broker"]
