"""What an operator sees when the environment holds several bad settings: every process
that starts the service names each bad variable on its own line of stderr, with no
traceback and no secret, and exits with a non-zero status before serving anything."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests import processes
from tests.processes import free_port
from tests.test_settings import production_env

pytestmark = pytest.mark.integration

# An unescaped "/" in the password: the URL cannot be read, and must not be echoed.
DATABASE_URL = "mysql://app:s3cr/et@db.internal/diagnosis"
# The password of a Redis URL without its scheme must not be echoed either.
REDIS_URL = ":s3cr3t@127.0.0.1:6379"
BAD = {
    # Refused with the others, not by Django's and django-cors-headers' checks afterwards.
    "CSRF_TRUSTED_ORIGINS": "diagnosis.example.com",
    "CORS_ALLOWED_ORIGINS": "https://chat.example.com/widget",
    "DATABASE_URL": DATABASE_URL,
    "REDIS_URL": REDIS_URL,
    "Q_POLL": "nan",
    # Against the default Q_RETRY (60): a rule between two variables.
    "Q_TIMEOUT": "90",
    "OPINION_PROVIDER": "bogus",
    "LOG_LEVEL": "verbose",
    # Read by config/search_settings.py, a module of its own.
    "MILVUS_TIMEOUT": "soon",
}
EXPECTED = [
    "Configuration error: CSRF_TRUSTED_ORIGINS must list origins as scheme://host[:port], got "
    "'diagnosis.example.com' (no scheme)",
    "Configuration error: DATABASE_URL is not understood: ",
    "Configuration error: REDIS_URL must use one of the schemes redis, rediss, unix, got no scheme",
    "Configuration error: CORS_ALLOWED_ORIGINS must list origins as scheme://host[:port], got "
    "'https://chat.example.com/widget' (a path)",
    "Configuration error: Q_POLL must be a finite number, got 'nan'",
    "Configuration error: Q_TIMEOUT (90) must be lower than Q_RETRY (60): ",
    "Configuration error: OPINION_PROVIDER must be one of heuristic, openai, off, got 'bogus'",
    "Configuration error: LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got "
    "'verbose'",
    "Configuration error: MILVUS_TIMEOUT must be a number, got 'soon'",
]
GUNICORN = str(Path(sys.executable).parent / "gunicorn")


def run_until_it_exits(
    command: list[str], env: dict[str, str] = BAD
) -> subprocess.CompletedProcess:
    return processes.run_until_it_exits(command, env=production_env(**env))


def assert_every_bad_variable_named_plainly(result: subprocess.CompletedProcess) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    named = [line for line in result.stderr.splitlines() if line.startswith("Configuration")]
    assert len(named) == len(EXPECTED), result.stderr
    for line, expected in zip(named, EXPECTED, strict=True):
        assert line.startswith(expected), line
    for secret in (production_env()["SECRET_KEY"], "s3cr", DATABASE_URL, REDIS_URL):
        assert secret not in result.stdout + result.stderr


@pytest.mark.parametrize(
    "command",
    [["check"], ["runserver", "127.0.0.1:0"], ["qcluster"]],
    ids=" ".join,
)
def test_manage_py_names_every_bad_setting_at_once_and_nothing_else(command: list[str]) -> None:
    result = run_until_it_exits([sys.executable, "manage.py", *command])

    assert_every_bad_variable_named_plainly(result)
    assert len(result.stderr.strip().splitlines()) == len(EXPECTED), result.stderr


def gunicorn() -> list[str]:
    return [
        GUNICORN,
        "-c",
        "config/gunicorn.conf.py",
        "config.wsgi",
        "--bind",
        f"127.0.0.1:{free_port()}",
        "--workers",
        "2",
    ]


def test_gunicorn_names_every_bad_setting_once_without_a_traceback_and_exits() -> None:
    result = run_until_it_exits(gunicorn())

    assert_every_bad_variable_named_plainly(result)


# Settings that code changes after reading the environment: no variable is refused, the
# system checks judge them (evaluation.E001), in the words start-up would use.
CHANGED_IN_CODE = """
from config.settings import *  # noqa: F403

Q_CLUSTER = {**Q_CLUSTER, "timeout": 90}  # noqa: F405
"""


def test_gunicorn_refuses_to_serve_what_the_system_checks_refuse_a_line_each(
    tmp_path: Path,
) -> None:
    (tmp_path / "changed_in_code.py").write_text(CHANGED_IN_CODE)
    env = {"DJANGO_SETTINGS_MODULE": "changed_in_code", "PYTHONPATH": str(tmp_path)}

    result = run_until_it_exits(gunicorn(), env)
    refused_by_manage_py = run_until_it_exits([sys.executable, "manage.py", "check"], env)

    assert result.returncode != 0
    assert refused_by_manage_py.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "(evaluation.E001)" in line]
    assert line.startswith(
        "Configuration error: ?: (evaluation.E001) Q_TIMEOUT (90) must be lower than "
        "Q_RETRY (60): a task still running when it is delivered again would run twice at once"
    ), line
    assert "(evaluation.E001) Q_TIMEOUT (90) must be lower" in refused_by_manage_py.stderr
