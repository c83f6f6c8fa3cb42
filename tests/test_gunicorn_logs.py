"""gunicorn started with config/gunicorn.conf.py writes its own lines as the service does
(one JSON object per line on stderr) and an access line per request on stdout, in JSON,
whose query string shows no value a token could travel in."""

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.processes import (
    child_env,
    free_port,
    gunicorn_command,
    gunicorn_with_config,
    run_until_it_exits,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def serve_and_read(tmp_path: Path, paths: list[str], **extra: str) -> tuple[list[str], list[str]]:
    """Start gunicorn (one worker), GET each of `paths`, stop it; its stdout and stderr
    lines."""
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    env = child_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", **extra)
    env.pop("LOG_FORMAT", None)
    with (
        out.open("w") as stdout,
        err.open("w") as stderr,
        gunicorn_with_config(env, stdout=stdout, stderr=stderr) as (base, _port),
    ):
        for path in paths:
            _status(base + path, request_id="req-42")
    return out.read_text().splitlines(), err.read_text().splitlines()


def _status(url: str, *, request_id: str | None = None) -> int:
    headers = {"X-Request-ID": request_id} if request_id else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0


def parsed(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def test_gunicorns_own_lines_are_json_like_the_services(tmp_path) -> None:
    _out, err = serve_and_read(tmp_path, ["/healthz"])

    entries = parsed(err)  # fails on any line that is not JSON
    gunicorn = [entry for entry in entries if entry["logger"] == "gunicorn.error"]
    assert any("Booting worker" in entry["message"] for entry in gunicorn)
    assert all({"time", "level", "message"} <= set(entry) for entry in gunicorn)


def test_each_request_has_a_json_access_line_on_stdout(tmp_path) -> None:
    out, err = serve_and_read(tmp_path, ["/healthz", "/api/sessions?limit=5"])

    access = [entry for entry in parsed(out) if entry["logger"] == "gunicorn.access"]
    by_path = {entry["path"]: entry for entry in access}
    sessions = by_path["/api/sessions"]
    assert sessions["method"] == "GET"
    assert sessions["status"] == 401
    assert sessions["query"] == "limit=5"
    assert sessions["request_id"] == "req-42"
    assert sessions["remote_addr"] == "127.0.0.1"
    assert sessions["bytes"] > 0
    assert isinstance(sessions["duration_ms"], float)
    assert sessions["message"] == "GET /api/sessions 401"
    assert not [line for line in err if "gunicorn.access" in line]


def test_a_token_in_a_query_string_never_reaches_the_access_log(tmp_path) -> None:
    secret = "eyJzZXNzaW9uIjoiczEifQ.SECRETSIGNATURE"
    out, _err = serve_and_read(
        tmp_path, [f"/api/feedback?token={secret}&feedbackToken={secret}&limit=2"]
    )

    assert secret not in "\n".join(out)
    [line] = [entry for entry in parsed(out) if entry.get("path") == "/api/feedback"]
    assert line["query"] == "token=[redacted]&feedbackToken=[redacted]&limit=2"


def test_the_access_log_can_be_turned_off(tmp_path) -> None:
    out, _err = serve_and_read(tmp_path, ["/healthz"], GUNICORN_ACCESS_LOG="0")

    assert [line for line in out if "gunicorn.access" in line] == []


def test_a_bad_access_log_switch_stops_gunicorn_naming_it_with_the_other_bad_variables(
    tmp_path,
) -> None:
    env = child_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        GUNICORN_ACCESS_LOG="maybe",
        Q_POLL="nan",
    )
    done = run_until_it_exits(gunicorn_command(free_port()), env=env)

    assert done.returncode == 1
    assert "Configuration error: GUNICORN_ACCESS_LOG must be one of" in done.stderr
    assert "Configuration error: Q_POLL must be a finite number" in done.stderr
