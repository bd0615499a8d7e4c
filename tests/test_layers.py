"""The layering rule: simulation ← agents / environments / analysis ← scenarios.

Checked on the source with `ast`, so an import added inside a function or under TYPE_CHECKING
counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache

import pytest
from source_tree import PACKAGES, ROOT, imported_packages, imports

ALLOWED: dict[str, set[str]] = {
    "simulation": set(),
    "analysis": {"simulation"},
    "agents": {"simulation"},
    "environments": {"simulation"},
    "scenarios": {"simulation", "analysis", "agents", "environments"},
}


@cache
def package_imports() -> dict[str, dict[str, set[str]]]:
    """package → {module file → imported personasim packages other than itself}. Parsed when a
    test first asks, not at collection (every test process collects this module)."""
    result: dict[str, dict[str, set[str]]] = {}
    for package in PACKAGES:
        modules: dict[str, set[str]] = {}
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            package_path = relative.parent.parts
            imports = imported_packages(path.read_text(encoding="utf-8"), package_path)
            modules[str(relative)] = imports - {package}
        result[package] = modules
    return result


def test_the_import_collector() -> None:
    source = """
import os
import personasim.simulation.llm.chat
from personasim.agents import decide
from personasim import analysis
from . import sibling
from .events import Event
from ..environments.trust_game import TrustGame
from .. import scenarios
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from personasim.analysis.stats import eta_squared
def late():
    import personasim.environments
"""
    assert imported_packages(source, ("simulation",)) == {
        "simulation",
        "agents",
        "analysis",
        "environments",
        "scenarios",
    }
    assert imported_packages("from .sub import x\n", ("agents", "nested")) == {"agents"}
    assert imported_packages("import json\nfrom pathlib import Path\n", ("agents",)) == set()


def test_an_import_by_a_written_name_counts() -> None:
    """`importlib.import_module("personasim.…")` imports as surely as an import statement, so
    an upward import or a circle cannot hide in a string; a name in a variable is not read."""
    source = """
import importlib
from importlib import import_module
def late():
    importlib.import_module("personasim.scenarios.trust")
    import_module("personasim.agents")
    __import__("personasim.environments.trust_game")
    importlib.import_module("json")
    importlib.import_module(BUILTIN_MODULE)
    importlib.import_module(f"personasim.{name}")
"""
    assert imported_packages(source, ("simulation",)) == {"scenarios", "agents", "environments"}
    found = imports(source, "simulation.core.x")
    assert [(i.line, i.target) for i in found] == [
        (5, ("scenarios", "trust")),
        (6, ("agents",)),
        (7, ("environments", "trust_game")),
    ]


def test_every_package_has_modules() -> None:
    for package in PACKAGES:
        assert f"{package}/__init__.py" in package_imports()[package]


def test_the_scan_sees_real_imports() -> None:
    """Guards against a collector that silently finds nothing."""
    assert "simulation" in package_imports()["environments"]["environments/trust_game/place.py"]
    assert {"agents", "environments", "simulation"} <= package_imports()["scenarios"][
        "scenarios/trust/population.py"
    ]
    assert "analysis" in package_imports()["scenarios"]["scenarios/trust/metrics.py"]


@pytest.mark.parametrize("package", PACKAGES)
def test_layering(package: str) -> None:
    offending = {
        module: sorted(imports - ALLOWED[package])
        for module, imports in package_imports()[package].items()
        if imports - ALLOWED[package]
    }
    assert offending == {}, f"{package} may import only {sorted(ALLOWED[package])}"


def test_simulation_finds_scenarios_by_name_only() -> None:
    """The one link from the kernel to the built-in scenarios is a string, not an import."""
    source = (ROOT / "simulation" / "core" / "scenario.py").read_text(encoding="utf-8")
    assert '"personasim.scenarios"' in source
    assert "scenarios" not in imported_packages(source, ("simulation", "core"))


@pytest.mark.parametrize("package", PACKAGES)
def test_package_declares_all(package: str) -> None:
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    declared = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert len(declared) == 1, f"{package}/__init__.py must define __all__ once"
    names = ast.literal_eval(declared[0].value)
    assert names and all(isinstance(name, str) for name in names)
    assert len(set(names)) == len(names), "__all__ lists a name twice"

    module = importlib.import_module(f"personasim.{package}")
    assert list(module.__all__) == list(names)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []
    namespace: dict[str, object] = {}
    exec(f"from personasim.{package} import *", namespace)
    assert set(module.__all__) <= set(namespace)


@pytest.mark.parametrize(
    "module_file",
    [
        str(p.relative_to(ROOT))
        for package in PACKAGES
        for p in sorted((ROOT / package).rglob("*.py"))
    ],
)
def test_module_all_names_exist(module_file: str) -> None:
    name = "personasim." + module_file.removesuffix(".py").replace("/", ".")
    name = name.removesuffix(".__init__")
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", [])
    assert [n for n in exported if not hasattr(module, n)] == []
