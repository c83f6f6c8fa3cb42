"""gunicorn's control socket (`gunicornc`): off unless the operator names a path, so two
masters of one user never share the default path in the home directory (the second took
it over, and `gunicornc` then managed the other instance than the one it was pointed at)."""

import time
from pathlib import Path

import pytest

from tests.processes import child_env, start_gunicorn, stop_group

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def sockets_while_serving(tmp_path: Path, **extra: str) -> list[Path]:
    """The control sockets under the home directory and the run directory once gunicorn
    answers (it removes its socket when it stops)."""
    home, run = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    run.mkdir()
    env = child_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        HOME=str(home),
        XDG_RUNTIME_DIR="",
        **extra,
    )
    web, _ = start_gunicorn(env, workers=1, args=("-c", "config/gunicorn.conf.py"))
    try:
        # The master opens its socket beside serving, not before: on a busy machine it
        # came a moment after the first answer. Looked for up to 5 s.
        deadline = time.monotonic() + 5
        while True:
            found = sorted(path for folder in (home, run) for path in folder.rglob("*.ctl"))
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.1)
    finally:
        stop_group(web)


def test_gunicorn_opens_no_control_socket_unless_asked(tmp_path) -> None:
    assert sockets_while_serving(tmp_path) == []


def test_gunicorn_opens_the_control_socket_the_operator_names(tmp_path) -> None:
    path = tmp_path / "run" / "web.ctl"

    assert sockets_while_serving(tmp_path, GUNICORN_CONTROL_SOCKET=str(path)) == [path]
