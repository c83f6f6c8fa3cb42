"""A log line says what happened, in one line, whatever a client sent: a session id in a
URL is named on the request's lines only when it is a session id, and a value or a
message holding control or format characters (a line break, ESC, a bidirectional
override) is written with those characters escaped, in the plain format as in JSON."""

import json
import logging
import unicodedata

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from config.logging import JsonFormatter, PlainFormatter

pytestmark = pytest.mark.django_db

ESC = "\x1b"
RLO, PDF = "\u202e", "\u202c"
FORGED = "2026-12-07T20:00:00.000+00:00 INFO diagnosis.api API key revoked"
FORGING_PATH = (
    "/api/sessions/x%0a2026-12-07T20:00:00.000%2B00:00%20INFO%20diagnosis.api"
    "%20API%20key%20revoked%0a%1b%5b2J/complete"
)


@pytest.fixture
def logged():  # type: ignore[no-untyped-def]
    """What is logged while the test runs, through the console handler's filters, in
    each format: {"plain": [...], "json": [...]}."""
    [console] = [h for h in logging.getLogger().handlers if h.name == "console"]
    lines: dict[str, list[str]] = {"plain": [], "json": []}
    plain = PlainFormatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    handlers = []
    for name, formatter in (("plain", plain), ("json", JsonFormatter())):

        class Collect(logging.Handler):
            def emit(self, record: logging.LogRecord, into=lines[name]) -> None:
                into.append(self.format(record))

        handler = Collect(level=logging.DEBUG)
        handler.setFormatter(formatter)
        for line_filter in console.filters:
            handler.addFilter(line_filter)
        handlers.append(handler)
    root = logging.getLogger()
    previous = root.level
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield lines
    for handler in handlers:
        root.removeHandler(handler)
    root.setLevel(previous)


def shown_raw(text: str) -> list[str]:
    """The control and format characters `text` holds as themselves."""
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")]


# --- The session id in a URL ---------------------------------------------------------


def test_a_url_forging_a_log_line_writes_no_line_of_its_own_and_no_escape(logged) -> None:
    response = Client().post(FORGING_PATH)

    assert response.status_code == 401
    output = "\n".join(logged["plain"])
    assert not any(line.startswith(FORGED) for line in output.splitlines())
    assert ESC not in output
    assert "[session" not in output
    assert all("session_id" not in json.loads(line) for line in logged["json"])


@pytest.mark.parametrize("session_id", ["a%20b", "a%22b", "a=b", "x" * 65, "%E2%80%AEab"])
def test_what_is_no_session_id_is_not_named_as_the_requests_session(logged, session_id) -> None:
    Client().post(f"/api/sessions/{session_id}/complete")

    assert logged["json"]
    assert all("session_id" not in json.loads(line) for line in logged["json"])


def test_a_session_id_in_the_url_still_names_the_requests_session(api, logged) -> None:
    api.post("/api/sessions/no-such-session/complete", {"status": "FAILED"}, format="json")

    refused = [json.loads(line) for line in logged["json"] if "Not Found" in line]
    assert refused and refused[0]["session_id"] == "no-such-session"
    assert any(line.endswith("[session no-such-session]") for line in logged["plain"])


# --- Values and messages ---------------------------------------------------------------


def test_a_failed_admin_login_logs_the_username_with_its_escapes_escaped(logged) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", "right-password")
    username = f"bob{ESC}[2J{ESC}[31mRED{ESC}[0m{RLO}evil{PDF}"

    Client().post(
        "/admin/login/", {"username": username, "password": "wrong"}, REMOTE_ADDR="10.0.0.1"
    )

    [plain] = [line for line in logged["plain"] if "admin login failed" in line]
    [entry] = [line for line in logged["json"] if "admin login failed" in line]
    assert shown_raw(plain) == []
    assert 'username="bob\\u001b[2J\\u001b[31mRED\\u001b[0m\\u202eevil\\u202c"' in plain
    assert shown_raw(entry) == []
    assert json.loads(entry)["username"] == username


@pytest.mark.parametrize(
    "value",
    [
        f"evil{RLO}txet",
        "del\x7f",
        "next\x85line",
        "\u2066isolate\u2069",
        "tag\U000e0041",
        "zero\u200bwidth",
    ],
)
def test_a_value_with_a_control_or_format_character_is_quoted_and_escaped(value: str) -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "done", None, None)
    record.value = value
    record.session_id = "s-1"

    plain = PlainFormatter("%(message)s").format(record)
    line = JsonFormatter().format(record)

    assert shown_raw(plain) == [] and shown_raw(line) == []
    assert plain.startswith('done value="') and plain.endswith('" [session s-1]')
    assert json.loads(plain[len("done value=") : -len(" [session s-1]")]) == value
    assert json.loads(line)["value"] == value


def test_a_message_holding_a_line_break_or_an_escape_stays_one_line() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "a\nb\x1b[2J%s", ("c\u202e",), None)

    plain = PlainFormatter("%(levelname)s %(message)s").format(record)
    line = JsonFormatter().format(record)

    assert plain == "INFO a\\nb\\u001b[2Jc\\u202e"
    assert shown_raw(line) == []
    assert json.loads(line)["message"] == "a\nb\x1b[2Jc\u202e"


def test_plain_text_and_other_scripts_are_written_as_they_are() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "已合并 done", None, None)
    record.note = "连接池耗尽"
    record.mixed = f"שלום{chr(0x200F)}"  # a right-to-left mark: a format character

    plain = PlainFormatter("%(message)s").format(record)

    assert plain == '已合并 done note=连接池耗尽 mixed="שלום\\u200f"'


def test_every_character_not_shown_as_itself_is_escaped() -> None:
    # The escaped characters are listed in config/logging.py: they are Python's own.
    unshown = [
        chr(code)
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp")
    ]
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "done", None, None)
    record.value = "".join(unshown)

    assert shown_raw(PlainFormatter("%(message)s").format(record)) == []
    assert shown_raw(JsonFormatter().format(record)) == []
