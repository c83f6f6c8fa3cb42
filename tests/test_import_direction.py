"""Apps import one way, feedback > evaluation > caselibrary > diagnosis > config, and no
package's modules import each other in a circle: the import contracts in pyproject.toml.
A lower app reaches a higher one by a django-q2 task's dotted name, which must exist."""

import importlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from django.apps import apps

from tests.processes import ROOT

# `lint-imports` itself, run from the checkout as `make lint` runs it.
LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())"
)


# A django-q2 task named by its dotted path, as lower apps reach higher ones.
TASK_NAME = re.compile(
    r"[\"']((?:config|diagnosis|caselibrary|evaluation|feedback)\.tasks\.\w+)[\"']"
)


def _contracts() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "importlinter"
    ]


def test_every_import_keeps_the_layers_and_no_package_imports_itself_in_a_circle() -> None:
    result = subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # Both contracts were checked (a configuration that found none would pass).
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def test_every_app_of_ours_has_its_place_in_the_layers() -> None:
    # Our apps are the top-level packages of the checkout; the others are installed.
    ours = {config.name for config in apps.get_app_configs() if Path(config.path).parent == ROOT}
    layers = _contracts()["contracts"][0]["layers"]
    assert ours | {"config"} == set(layers)


def test_every_task_named_by_its_dotted_path_exists() -> None:
    named = {
        name
        for app in _contracts()["root_packages"]
        for path in sorted((ROOT / app).rglob("*.py"))
        for name in TASK_NAME.findall(path.read_text(encoding="utf-8"))
    }
    missing = []
    for name in sorted(named):
        module, _, function = name.rpartition(".")
        if not callable(getattr(importlib.import_module(module), function, None)):
            missing.append(name)
    assert missing == []
    # The scan saw the names the apps enqueue and schedule (a wrong pattern would pass).
    assert {"evaluation.tasks.session_score", "caselibrary.tasks.case_outcomes_task"} <= named
