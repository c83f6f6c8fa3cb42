"""Structured logs carry the session id on every line about a session; keys never appear."""

import datetime
import json
import logging
import os
import subprocess
import sys
import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from config.logging import JsonFormatter, PlainFormatter
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def test_every_line_about_a_session_names_it(
    api, json_lines, django_capture_on_commit_callbacks
) -> None:
    api.post("/api/sessions", {"sessionId": "log-1", "query": "q"}, format="json")
    api.post(
        "/api/sessions/log-1/tool-invocations",
        {"toolName": "QueryInternalDocsTools", "status": "SUCCESS", "matchLevel": "L1"},
        format="json",
    )
    with django_capture_on_commit_callbacks(execute=True):
        api.post(
            "/api/sessions/log-1/complete", {"status": "SUCCESS", "answer": "a"}, format="json"
        )
    api.post("/api/feedback", {"sessionId": "log-1", "feedback": "useful"}, format="json")

    ours = [json.loads(line) for line in json_lines]
    messages = {
        entry["message"]: entry
        for entry in ours
        if entry["logger"].split(".")[0] in {"diagnosis", "evaluation", "feedback"}
    }
    assert set(messages) >= {
        "session started",
        "tool invocations recorded",
        "session completed",
        "session scored",
        "feedback recorded",
    }
    assert {entry["session_id"] for entry in messages.values()} == {"log-1"}
    assert messages["session scored"]["evidence_score"] == 50
    assert messages["feedback recorded"]["feedback"] == "useful"
    # Sent with an API key (a browser's feedback token says "token").
    assert messages["feedback recorded"]["channel"] == "api_key"


def test_a_failed_request_about_a_session_is_logged_with_it(api, json_lines) -> None:
    DiagnosisSessionFactory(session_id="done", status="FAILED")

    api.post("/api/sessions/done/complete", {"status": "SUCCESS", "answer": "late"}, format="json")

    warnings = [json.loads(line) for line in json_lines if '"django.request"' in line]
    assert warnings and all(entry["session_id"] == "done" for entry in warnings)


def test_api_keys_never_reach_the_logs(make_client, client, json_lines, settings) -> None:
    settings.DEBUG = True  # the most talkative configuration
    api = make_client("full")
    secret = api.raw_key
    DiagnosisSessionFactory(session_id="k", status="SUCCESS", answer="a")

    api.post("/api/sessions", {"query": "q"}, format="json")
    api.post("/api/feedback", {"sessionId": "k", "feedback": "useful"}, format="json")
    api.get("/api/sessions/nope")
    client.get("/api/sessions", HTTP_AUTHORIZATION=f"Api-Key {secret[:-1]}x")
    client.post(
        "/api/feedback", {}, content_type="application/json", HTTP_AUTHORIZATION=f"Api-Key {secret}"
    )

    assert json_lines  # something was logged
    assert not [line for line in json_lines if secret.split(".")[1] in line]


@pytest.mark.parametrize(
    ("level", "lines"),
    [
        ("INFO", ["INFO django.utils.autoreload Watching for file changes with StatReloader"]),
        ("WARNING", []),
    ],
)
def test_a_line_of_djangos_own_is_printed_once_and_as_loud_as_log_level_allows(
    level: str, lines: list[str]
) -> None:
    # The development server's "Watching for file changes" came out twice: once bare (the
    # handler Django sets up by default) and once in the service's format; and at
    # LOG_LEVEL=WARNING Django's INFO lines still came out.
    script = (
        "import django, logging; django.setup(); "
        "logging.getLogger('django.utils.autoreload')"
        ".info('Watching for file changes with %s', 'StatReloader')"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "LOG_FORMAT": "plain",
        "LOG_LEVEL": level,
    }

    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )

    printed = [line for line in result.stderr.splitlines() if "Watching" in line]
    assert [line.split(" ", 1)[1] for line in printed] == lines


def test_a_page_refused_to_a_staff_user_is_one_line_without_a_traceback(json_lines) -> None:
    user = get_user_model().objects.create_user("ops.nobody", is_staff=True)
    client = Client()
    client.force_login(user)

    assert client.get("/admin/caselibrary/caselibrary/").status_code == 403

    refused = [
        entry
        for entry in map(json.loads, json_lines)
        if entry["logger"] == "django.request" and entry.get("status_code") == 403
    ]
    assert len(refused) == 1
    assert refused[0]["message"] == "Forbidden (Permission denied): /admin/caselibrary/caselibrary/"
    assert refused[0]["level"] == "WARNING"
    assert "exception" not in refused[0]


def test_a_server_error_keeps_its_traceback(json_lines, settings) -> None:
    logger = logging.getLogger("django.request")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logger.error("Internal Server Error: /x", exc_info=True, extra={"status_code": 500})

    [entry] = [json.loads(line) for line in json_lines if "Internal Server Error" in line]
    assert "RuntimeError: boom" in entry["exception"]


def test_a_host_not_allowed_is_one_line_without_a_traceback(json_lines) -> None:
    assert Client().get("/api/sessions", HTTP_HOST="evil.example").status_code == 400

    [entry] = [
        json.loads(line) for line in json_lines if "django.security" in json.loads(line)["logger"]
    ]
    assert "evil.example" in entry["message"]
    assert "exception" not in entry


def test_log_lines_go_to_stderr_so_a_commands_output_stays_its_own() -> None:
    script = (
        "import django, logging; django.setup(); "
        "logging.getLogger('feedback.retention').warning('sessions purged'); "
        "print('the output')"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
    }

    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )

    printed = [json.loads(line) for line in result.stderr.splitlines() if "purged" in line]
    assert [(entry["logger"], entry["message"]) for entry in printed] == [
        ("feedback.retention", "sessions purged")
    ]
    assert result.stdout == "the output\n"


def _record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord("feedback.retention", logging.INFO, __file__, 1, "done", (), None)
    record.__dict__.update(extra)
    return record


def test_lists_and_dicts_passed_in_extra_are_logged_as_json() -> None:
    record = _record(failed=[], counts={"cases": 3}, when=datetime.date(2026, 12, 6))

    entry = json.loads(JsonFormatter().format(record))

    assert entry["failed"] == []
    assert entry["counts"] == {"cases": 3}
    assert entry["when"] == "2026-12-06"


def test_a_plain_line_carries_the_fields_after_the_message() -> None:
    formatter = PlainFormatter("%(levelname)s %(name)s %(message)s")
    record = _record(sessions=12, cutoff="2026-11-06", note="two words", gone=None, ids=["a"])

    line = formatter.format(record)

    assert line == (
        'INFO feedback.retention done sessions=12 cutoff=2026-11-06 note="two words" ids=["a"]'
    )


def test_a_plain_line_stays_one_line_and_names_its_session_before_a_traceback() -> None:
    formatter = PlainFormatter("%(levelname)s %(name)s %(message)s")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = _record(reason="first\nsecond", session_id="s-1")
        record.exc_info = sys.exc_info()

    first, *rest = formatter.format(record).splitlines()

    assert first == 'INFO feedback.retention done reason="first\\nsecond" [session s-1]'
    assert rest[0].startswith("Traceback")


def test_a_refused_requests_line_keeps_the_values_of_its_query_string_out(
    client, json_lines
) -> None:
    # The API reads credentials from headers only, but a client may put one in the URL.
    response = client.post(
        "/api/feedback?token=SECRET-IN-QUERY&limit=5",
        {"sessionId": "s", "feedback": "useful"},
        content_type="application/json",
        HTTP_AUTHORIZATION="Feedback forged",
        HTTP_X_FORWARDED_PROTO="https",
    )

    lines = [json.loads(line) for line in json_lines if '"django.request"' in line]
    assert response.status_code in (401, 403) and lines
    assert "SECRET-IN-QUERY" not in "".join(json_lines)
    assert lines[0]["request"] == "<WSGIRequest: POST '/api/feedback?token=[redacted]&limit=5'>"


def test_a_plain_line_writes_its_time_in_utc_with_its_offset_whatever_the_time_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Django sets TZ to TIME_ZONE once the settings load: gunicorn's first line was UTC,
    # the next ones local time, neither saying which.
    formatter = PlainFormatter("%(asctime)s %(message)s")
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "started", None, None)
    record.created = 1_796_000_000.5
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        line = formatter.format(record)
    finally:
        monkeypatch.undo()
        time.tzset()

    assert line == "2026-11-30T00:53:20.500+00:00 started"
