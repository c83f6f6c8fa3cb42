"""Our management commands fail the way a person at a terminal can act on: one line on
stderr naming the problem, a non-zero exit, never a traceback."""

import io
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class

from diagnosis.management.commands._base import ServiceCommand
from tests.processes import ROOT, child_env

OUR_APPS = {"diagnosis", "evaluation", "caselibrary", "feedback"}
OUR_COMMANDS = sorted(name for name, app in get_commands().items() if app in OUR_APPS)


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_every_command_of_ours_reports_problems_as_one_line() -> None:
    assert {"create_api_key", "devserver", "ensure_admin", "export", "rescore"} <= set(OUR_COMMANDS)
    for name in OUR_COMMANDS:
        assert isinstance(load_command_class(get_commands()[name], name), ServiceCommand), name


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("create_api_key", "   "), "Give the key a name"),
        (("create_api_key", "x" * 51), "at most 50"),
        (("create_api_key", "agent", "--scope", "root"), "invalid choice: 'root'"),
        (("ensure_admin", "--username", " "), "--username must not be empty"),
        (("load_demo_data", "--count", "0"), "--count must be at least 1"),
        (("rescore",), "Say which sessions"),
        (("rescore", "--all", "--batch", "0"), "--batch must be at least 1"),
        (("rescore", "--since", "2026-13-01"), "not a day"),
        (("rescore", "--since", "2026-02-01", "--until", "2026-01-01"), "--since is after"),
        (("export", "sessions"), "invalid choice: 'sessions'"),
        (("export", "cases", "--format", "xlsx"), "invalid choice: 'xlsx'"),
        (("check_findability", "--sample", "-1"), "--sample must be positive"),
        (("check_findability",), "Nothing is indexed yet"),
        (("devserver", "not-a-port"), "is not a port"),
    ],
)
def test_a_user_mistake_is_a_command_error_naming_it(settings, args, message) -> None:
    settings.DEBUG = True

    with pytest.raises(CommandError, match=message):
        run(*args)


@pytest.mark.django_db
@pytest.mark.parametrize("command", ["ensure_admin", "devserver", "load_demo_data"])
def test_the_development_commands_refuse_to_run_without_debug(settings, command) -> None:
    settings.DEBUG = False

    with pytest.raises(CommandError, match="DEBUG=1"):
        run(command)


def test_devserver_refuses_a_port_in_use_before_starting_anything(settings, tmp_path) -> None:
    settings.DEBUG = True
    settings.VAR_DIR = tmp_path
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        with pytest.raises(CommandError, match=f"Cannot listen on 127.0.0.1:{port}.*PORT="):
            run("devserver", f"127.0.0.1:{port}")

    assert not (Path(settings.VAR_DIR) / "log" / "worker.log").exists()


UNSET = "<unset>"


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    """`python manage.py ...` as a person types it; a variable given as UNSET is removed."""
    environment = {**child_env(), **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={k: v for k, v in environment.items() if v != UNSET},
        capture_output=True,
        text=True,
        timeout=60,
    )


def assert_one_line_failure(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.slow
def test_create_api_key_without_debug_or_a_secret_key_says_what_to_set() -> None:
    result = manage("create_api_key", "ci-agent", DEBUG=UNSET, SECRET_KEY=UNSET)

    assert_one_line_failure(result, "SECRET_KEY must be set")
    assert result.stdout == ""


@pytest.mark.slow
def test_a_nonsense_setting_is_one_line_too() -> None:
    result = manage("create_api_key", "ci-agent", DEBUG="maybe")

    assert_one_line_failure(result, "DEBUG must be one of")


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("create_api_key", "ci-agent"),
        ("ensure_admin",),
        ("load_demo_data", "--count", "1"),
        ("rescore", "--all", "--no-progress"),
        ("export", "bad_cases"),
        ("case_index", "--build"),
    ],
    ids=lambda args: args[0],
)
def test_a_database_that_was_never_migrated_is_one_line_pointing_at_migrate(tmp_path, args) -> None:
    # In production (DEBUG off) except where the command is for development only.
    debug = "1" if args[0] in {"ensure_admin", "load_demo_data"} else "0"
    empty = tmp_path / "never-migrated.sqlite3"

    result = manage(*args, DEBUG=debug, DATABASE_URL=f"sqlite:///{empty}")

    assert_one_line_failure(result, "CommandError", "migrate")


@pytest.mark.slow
def test_a_wrong_argument_on_the_command_line_is_one_line_and_exit_status_2() -> None:
    result = manage("rescore", "--since", "yesterday")

    assert result.returncode == 2
    assert_one_line_failure(result, "--since", "not a day", "--help")
