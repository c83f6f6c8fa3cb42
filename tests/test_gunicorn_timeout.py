"""gunicorn's worker timeout outlasts the database's own timeouts: when the database hangs
(the connection is up, nothing answers) a request waits DB_READ_TIMEOUT for the health
check of its connection and DB_CONNECT_TIMEOUT for a new one, then answers 503. A worker
killed by gunicorn before that answers nothing at all. An operator's own --timeout wins."""

import http.client
import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT, free_port, stop_group, wait_for
from tests.test_settings import load_settings, production_env

CONF = ROOT / "config" / "gunicorn.conf.py"
GUNICORN = str(Path(sys.executable).parent / "gunicorn")
MYSQL_URL = "mysql://app:pw@db.internal:3306/diagnosis"


def database_wait(monkeypatch: pytest.MonkeyPatch, **env: str) -> int:
    """The longest a request waits on a hanging database with the settings `env` gives."""
    for name in ("DB_READ_TIMEOUT", "DB_CONNECT_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    options = load_settings(monkeypatch, DEBUG="1", DATABASE_URL=MYSQL_URL, **env)["DATABASES"][
        "default"
    ]["OPTIONS"]
    return options["read_timeout"] + options["connect_timeout"]


def conf(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict:
    for name in ("DB_READ_TIMEOUT", "DB_CONNECT_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


@pytest.mark.parametrize(
    "env",
    [{}, {"DB_READ_TIMEOUT": "100", "DB_CONNECT_TIMEOUT": "20"}, {"DB_READ_TIMEOUT": " 45 "}],
    ids=["defaults", "raised", "spaces"],
)
def test_the_worker_timeout_outlasts_a_request_waiting_on_a_hanging_database(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    settings = conf(monkeypatch, **env)
    wait = database_wait(monkeypatch, **env)

    assert settings["timeout"] >= wait + 10
    # A worker stopped during such a wait (a restart, a deploy) still gets to answer.
    assert settings["graceful_timeout"] >= wait + 10


def test_a_database_timeout_the_settings_refuse_leaves_the_refusal_to_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # on_starting stops gunicorn naming the variable; the file itself still loads.
    assert conf(monkeypatch, DB_READ_TIMEOUT="soon")["timeout"] >= database_wait(monkeypatch) + 10


def effective_timeouts(tmp_path: Path, *args: str, **env: str) -> tuple[int, int]:
    """timeout and graceful_timeout as gunicorn resolves them (it prints them and exits)."""
    result = subprocess.run(
        [GUNICORN, "-c", "config/gunicorn.conf.py", "config.wsgi", "--print-config", *args],
        cwd=ROOT,
        env=production_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr

    def setting(name: str) -> int:
        (value,) = re.findall(rf"^{name} +=\s*(\d+)$", result.stdout, re.MULTILINE)
        return int(value)

    return setting("timeout"), setting("graceful_timeout")


@pytest.mark.integration
def test_gunicorn_started_with_the_file_waits_out_the_database_timeouts(tmp_path) -> None:
    timeout, graceful = effective_timeouts(tmp_path, DB_READ_TIMEOUT="40", DB_CONNECT_TIMEOUT="8")

    assert timeout >= 40 + 8 + 10
    assert graceful >= 40 + 8 + 10


@pytest.mark.integration
def test_an_operators_timeout_on_the_command_line_or_in_gunicorn_cmd_args_wins(
    tmp_path,
) -> None:
    assert effective_timeouts(tmp_path, "--timeout", "200", "--graceful-timeout", "90") == (
        200,
        90,
    )
    assert effective_timeouts(tmp_path, GUNICORN_CMD_ARGS="--timeout 120")[0] == 120


def test_gunicorn_trusts_no_scheme_header_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # SECURE_PROXY_SSL_HEADER alone decides whether X-Forwarded-Proto makes a request
    # HTTPS; gunicorn's default trusted it from 127.0.0.1 whatever that setting said.
    assert conf(monkeypatch)["secure_scheme_headers"] == {}


def post_from_localhost(
    base: str, path: str, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    """POST an empty JSON object to `base` + `path`; the status and body, never following a
    redirect."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request(
            "POST",
            path,
            body=b"{}",
            headers={"Content-Type": "application/json", **(headers or {})},
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def answers_at_all(base: str) -> bool:
    try:
        post_from_localhost(base, "/healthz")
    except OSError:
        return False
    return True


@pytest.mark.integration
def test_a_local_x_forwarded_proto_does_not_make_plain_http_secure(tmp_path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = production_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    env.update(ALLOWED_HOSTS="127.0.0.1", SECURE_SSL_REDIRECT="1", SECURE_PROXY_SSL_HEADER="0")
    process = subprocess.Popen(
        [GUNICORN, "-c", "config/gunicorn.conf.py", "config.wsgi", "--bind", base[7:]],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: answers_at_all(base), timeout=60, what="gunicorn")
        status, body = post_from_localhost(base, "/api/sessions", {"X-Forwarded-Proto": "https"})
    finally:
        stop_group(process)

    assert status == 403
    assert json.loads(body)["code"] == "https_required"
