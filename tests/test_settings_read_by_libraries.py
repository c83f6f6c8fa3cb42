"""Two settings are read from the environment by libraries as well as by the settings:
django-q2 reads Q_CLUSTER_NAME, prometheus_client PROMETHEUS_MULTIPROC_DIR. They get the
value the settings took (the spaces around it dropped, a blank one meaning the default),
so an env file's trailing space neither stops every process with a traceback nor sends
the metrics to another directory."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.processes import ROOT
from tests.test_settings import load_settings


@pytest.mark.parametrize("name", ["qa6 ", " qa6", " "])
def test_a_queue_name_with_spaces_around_it_starts_the_commands(name: str) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "DEBUG": "1",
        "Q_CLUSTER_NAME": name,
        "DATABASE_URL": "sqlite:///:memory:",
    }
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from django_q.conf import Conf; print(Conf.PREFIX)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == (name.strip() or "diagnosis")


def test_metrics_go_to_the_directory_the_settings_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    directory = tmp_path / "metrics"

    load_settings(monkeypatch, DEBUG="1", PROMETHEUS_MULTIPROC_DIR=f" {directory} ")

    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(directory)
    assert directory.is_dir()


def test_a_relative_metrics_directory_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)

    with pytest.raises(ImproperlyConfigured, match="PROMETHEUS_MULTIPROC_DIR must be an absolute"):
        load_settings(monkeypatch, DEBUG="1", PROMETHEUS_MULTIPROC_DIR="metrics")
    assert not (tmp_path / "metrics").exists()


def test_a_metrics_directory_that_cannot_be_made_in_a_parent_that_exists_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(monkeypatch, DEBUG="1", PROMETHEUS_MULTIPROC_DIR="/proc/metrics")

    assert "does not exist" not in str(refused.value)
    assert "'/proc/metrics' cannot be made" in str(refused.value)


def test_a_blank_metrics_directory_means_none(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(monkeypatch, DEBUG="1", PROMETHEUS_MULTIPROC_DIR="  ")

    assert loaded["PROMETHEUS_MULTIPROC_DIR"] == ""
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ
