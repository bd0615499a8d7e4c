"""No module of ours imports another module's private (underscored) name: what one module
needs of another is that module's public API (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulation", "agents", "environments", "scenarios", "analysis")


def private_imports(source: str) -> list[tuple[int, str, str]]:
    """(line, module, name) of each `from personasim.… import _name` in `source`, inside
    functions too."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("personasim"):
            found += [
                (node.lineno, node.module or "", alias.name)
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
    return found


def test_the_check_finds_a_private_import() -> None:
    source = (
        "def f():\n    from personasim.simulation.runs.runner import RunError, _finish\n"
    )
    assert private_imports(source) == [
        (2, "personasim.simulation.runs.runner", "_finish")
    ]
    assert private_imports("from personasim.simulation import __version__, run_scenario\n") == []
    assert private_imports("from collections import _OrderedDictKeysView\n") == []


def test_no_module_imports_a_private_name_of_ours() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: from {module} import {name}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, module, name in private_imports(path.read_text())
    ]
    assert offenders == [], "\n".join(offenders)
