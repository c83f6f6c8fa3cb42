"""The admin modules stand on the apps' layering: feedback > evaluation > caselibrary >
diagnosis > config. A page that needs a higher app is registered in that app instead."""

import ast
from pathlib import Path

import pytest

from tests.processes import ROOT

LAYERS = ("config", "diagnosis", "caselibrary", "evaluation", "feedback")
MAX_LINES = 400


def admin_modules(app: str) -> list[Path]:
    single = ROOT / app / "admin.py"
    package = ROOT / app / "admin"
    return [single] if single.is_file() else sorted(package.glob("*.py"))


def imported_apps(path: Path) -> set[str]:
    apps = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            apps.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            apps.add(node.module.split(".")[0])
    return apps & set(LAYERS)


@pytest.mark.parametrize("app", ["diagnosis", "caselibrary", "feedback"])
def test_no_admin_module_imports_an_app_above_its_own(app: str) -> None:
    above = set(LAYERS[LAYERS.index(app) + 1 :])
    modules = admin_modules(app)

    upward = {str(path.relative_to(ROOT)): sorted(imported_apps(path) & above) for path in modules}

    assert modules  # a wrong ROOT would find nothing and pass
    assert {path: apps for path, apps in upward.items() if apps} == {}


@pytest.mark.parametrize("app", ["diagnosis", "caselibrary", "feedback"])
def test_no_admin_module_is_over_four_hundred_lines(app: str) -> None:
    lengths = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in admin_modules(app)
    }

    assert {path: n for path, n in lengths.items() if n > MAX_LINES} == {}
