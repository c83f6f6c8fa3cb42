"""Apps import one way: the fact store and the rule engine never import the feedback app."""

import ast
from pathlib import Path

from tests.processes import ROOT

# `feedback` may import every other app; these must work without it.
INDEPENDENT_OF_FEEDBACK = ("diagnosis", "evaluation")


def _imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_neither_the_fact_store_nor_the_rule_engine_imports_the_feedback_app() -> None:
    offending = [
        f"{path.relative_to(ROOT)}: {name}"
        for app in INDEPENDENT_OF_FEEDBACK
        for path in sorted((ROOT / app).rglob("*.py"))
        for name in _imported_modules(path)
        if name == "feedback" or name.startswith("feedback.")
    ]
    assert offending == []
    # The walk saw the apps' modules (a wrong ROOT would find nothing and pass).
    assert (ROOT / "diagnosis" / "services.py").is_file()
