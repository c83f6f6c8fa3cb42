"""Values an operator can set that start the service yet cannot be meant: a probe deadline
longer than any prober waits, a SECRET_KEY Django itself calls weak, a STATIC_ROOT that
means a different directory from each working directory. Each stops start-up with the
other bad variables."""

import subprocess
import sys

import pytest
from django.core.checks.security import base as django_security

from config.settings_rules import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)
from tests.test_settings import ROOT, load_settings, production_env, refusal

STRONG_KEY = "prod-" + "k3y" * 20


def test_a_probe_deadline_longer_than_a_minute_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert refusal(monkeypatch, PROBE_DB_DEADLINE_SECONDS="100000") == [
        "PROBE_DB_DEADLINE_SECONDS must be <= 60, got 100000"
    ]


def test_a_probe_deadline_of_a_minute_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", PROBE_DB_DEADLINE_SECONDS="60")

    assert loaded["PROBE_DB_DEADLINE_SECONDS"] == 60


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("s" * 10 + "ecret-key", "19 characters"),
        ("ab" * 40, "2 different characters"),
        ("django-insecure-" + "x3k9" * 12, "Django's start-project key"),
    ],
)
def test_a_weak_secret_key_stops_production_start_up_without_echoing_it(
    monkeypatch: pytest.MonkeyPatch, key: str, why: str
) -> None:
    [line] = refusal(monkeypatch, DEBUG="0", SECRET_KEY=key)

    assert line.startswith("SECRET_KEY must be at least 50 characters")
    assert why in line
    assert key not in line


def test_a_weak_secret_key_is_kept_for_development(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(monkeypatch, DEBUG="1", SECRET_KEY="dev")["SECRET_KEY"] == "dev"


def test_a_strong_secret_key_is_taken_in_production(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(monkeypatch, DEBUG="0", SECRET_KEY=STRONG_KEY)["SECRET_KEY"] == STRONG_KEY


def test_the_secret_key_rule_is_djangos_own() -> None:
    assert SECRET_KEY_MIN_LENGTH == django_security.SECRET_KEY_MIN_LENGTH
    assert SECRET_KEY_MIN_UNIQUE_CHARACTERS == django_security.SECRET_KEY_MIN_UNIQUE_CHARACTERS
    assert SECRET_KEY_INSECURE_PREFIX == django_security.SECRET_KEY_INSECURE_PREFIX


def test_a_relative_static_root_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert refusal(monkeypatch, STATIC_ROOT="staticfiles") == [
        "STATIC_ROOT must be an absolute path, got 'staticfiles': a relative one names "
        "a different directory for each working directory"
    ]


def test_an_absolute_static_root_is_taken(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", STATIC_ROOT=str(tmp_path / "static"))

    assert loaded["STATIC_ROOT"] == tmp_path / "static"


@pytest.mark.integration
def test_a_command_with_a_weak_secret_key_names_it_on_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**production_env(), "SECRET_KEY": "short-but-secret"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert result.stderr.startswith("Configuration error: SECRET_KEY must be at least 50")
    assert "Traceback" not in result.stderr
    assert "short-but-secret" not in result.stdout + result.stderr
