"""Rules over the source tree that keep its layout readable (docs/architecture.md):

- no import cycle between modules, counting imports inside functions (a cycle dodged by a
  late import is still a cycle in the design) but not those under `if TYPE_CHECKING:`, which
  never run (the core's agent, environment and model name each other only there, for
  annotations, as Mesa's own agent and model do);
- the kernel's sub-packages import downward only: base ← log ← llm ← core ← runs ← cli;
- no module over 500 lines;
- setup.py's package discovery finds exactly the folders with an `__init__.py` (pyproject
  keeps no hand-written list).

Each checker is first shown a small tree or graph it must flag, so one that finds nothing
cannot pass by accident.
"""

from __future__ import annotations

import importlib.util
import tomllib
from functools import cache
from pathlib import Path

import networkx as nx
import pytest
from source_tree import OWN, PACKAGES, ROOT, import_graph, module_name, source_files

MAX_LINES = 500
KERNEL_ORDER = ("base", "log", "llm", "core", "runs", "cli")  # bottom to top
RUNS_ORDER = ("lifecycle", "workers", "runner", "tools", "sweeps", "viewer")  # within runs/


def cycles(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """Each group of modules that import each other in a circle (sorted), with a message line."""
    digraph = nx.DiGraph((module, target) for module, edges in graph.items() for target in edges)
    return sorted(
        sorted(component)
        for component in nx.strongly_connected_components(digraph)
        if len(component) > 1
    )


def describe_cycle(graph: dict[str, dict[str, list[int]]], component: list[str]) -> str:
    """One circle through the component, edge by edge with the importing lines."""
    sub = nx.DiGraph(
        (module, target) for module in component for target in graph[module] if target in component
    )
    steps = nx.find_cycle(sub, source=component[0])
    return " → ".join(f"{a} (line {graph[a][b][0]})" for a, b in steps) + f" → {steps[0][0]}"


def kernel_rank(module: str) -> tuple[int, int] | None:
    """Where a kernel module sits: its sub-package's place in KERNEL_ORDER, then, under
    `runs/`, its part's place in RUNS_ORDER (0 elsewhere); `simulation` itself (its
    `__init__`, which re-exports all of them) is above them all, as `runs`' own `__init__` is
    above its parts; None outside the kernel."""
    parts = module.split(".")
    if parts[0] != "simulation":
        return None
    if len(parts) == 1:
        return (len(KERNEL_ORDER), 0)
    if parts[1] not in KERNEL_ORDER:
        raise AssertionError(f"{module}: kernel sub-package not in KERNEL_ORDER {KERNEL_ORDER}")
    rank = KERNEL_ORDER.index(parts[1])
    if parts[1] != "runs":
        return (rank, 0)
    if len(parts) == 2:
        return (rank, len(RUNS_ORDER))
    if parts[2] not in RUNS_ORDER:
        raise AssertionError(f"{module}: part of runs/ not in RUNS_ORDER {RUNS_ORDER}")
    return (rank, RUNS_ORDER.index(parts[2]))


def upward_imports(graph: dict[str, dict[str, list[int]]]) -> list[str]:
    """`module line N imports higher` for each kernel import against KERNEL_ORDER (and, within
    `runs/`, RUNS_ORDER)."""
    found = []
    for module, edges in sorted(graph.items()):
        rank = kernel_rank(module)
        if rank is None or module == "simulation":
            continue
        for target, lines in sorted(edges.items()):
            target_rank = kernel_rank(target)
            if target_rank is not None and target_rank > rank:
                found.append(f"{module} line {lines[0]} imports {target}")
    return found


def long_modules(root: Path = ROOT, limit: int = MAX_LINES) -> dict[str, int]:
    """module file → line count, for each over `limit`."""
    counts = {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in source_files(root)
    }
    return {name: n for name, n in counts.items() if n > limit}


def package_mismatch(declared: list[str], root: Path = ROOT) -> dict[str, list[str]]:
    """Packages pyproject lists without an `__init__.py` folder, and such folders it misses."""
    folders = {
        f"{OWN}.{module_name(path, root)}"
        for path in source_files(root)
        if path.name == "__init__.py"
    }
    return {
        "listed, no __init__.py": sorted(set(declared) - folders),
        "__init__.py, not listed": sorted(folders - set(declared)),
        "listed twice": sorted({name for name in declared if declared.count(name) > 1}),
    }


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


# A small kernel with one circle through a late import and a package that re-exports,
# one circle that exists only under TYPE_CHECKING, and one upward import.
SYNTHETIC = {
    "simulation/__init__.py": "from personasim.simulation.runs.sweeps.sweep import sweep\n",
    "simulation/log/__init__.py": "",
    "simulation/log/events.py": (
        "def late():\n    from personasim.simulation.runs.viewer import viewer\n"
    ),
    "simulation/core/__init__.py": "from personasim.simulation.core.agent import Agent\n",
    "simulation/core/agent.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from personasim.simulation.core.model import Model\n"
        "else:\n"
        "    import json\n"
        "class Agent: ...\n"
    ),
    "simulation/core/model.py": "from personasim.simulation.core.agent import Agent\n",
    "simulation/runs/sweeps/sweep.py": "def sweep():\n    from . import ray_sweep\n",
    "simulation/runs/sweeps/ray_sweep.py": "from personasim.simulation import sweep\n",
    "simulation/runs/viewer/viewer.py": "import personasim.simulation.log.events\n",
}


def test_the_graph_and_cycle_check_on_a_synthetic_tree(tmp_path: Path) -> None:
    graph = import_graph(write_tree(tmp_path, SYNTHETIC))
    assert graph["simulation.runs.sweeps.sweep"] == {
        "simulation.runs.sweeps.ray_sweep": [2]
    }  # module named
    assert graph["simulation.runs.sweeps.ray_sweep"] == {
        "simulation": [1]
    }  # the re-exporting __init__
    assert graph["simulation.core.agent"] == {}  # TYPE_CHECKING only
    assert cycles(graph) == [
        ["simulation", "simulation.runs.sweeps.ray_sweep", "simulation.runs.sweeps.sweep"],
        ["simulation.log.events", "simulation.runs.viewer.viewer"],
    ]
    text = describe_cycle(graph, ["simulation.log.events", "simulation.runs.viewer.viewer"])
    assert text == (
        "simulation.log.events (line 2) → simulation.runs.viewer.viewer (line 1) → "
        "simulation.log.events"
    )
    with_annotations = import_graph(tmp_path, type_checking=True)
    assert ["simulation.core.agent", "simulation.core.model"] in cycles(with_annotations)


def test_the_order_check_on_a_synthetic_tree(tmp_path: Path) -> None:
    graph = import_graph(write_tree(tmp_path, SYNTHETIC))
    assert upward_imports(graph) == [
        "simulation.log.events line 2 imports simulation.runs.viewer.viewer",
        "simulation.runs.sweeps.ray_sweep line 1 imports simulation",
    ]


# The parts of runs/: tools may use the runner and lifecycle, lifecycle may not use tools.
RUNS_TREE = {
    "simulation/__init__.py": "",
    "simulation/runs/__init__.py": "",
    "simulation/runs/lifecycle/__init__.py": "",
    "simulation/runs/lifecycle/run_dir.py": "def late():\n    from ..tools import replay\n",
    "simulation/runs/workers/__init__.py": "",
    "simulation/runs/workers/pool.py": "from personasim.simulation.runs.lifecycle import run_dir\n",
    "simulation/runs/runner.py": "from personasim.simulation.runs.workers import pool\n",
    "simulation/runs/tools/__init__.py": "",
    "simulation/runs/tools/replay.py": "from personasim.simulation.runs import runner\n",
    "simulation/runs/viewer/__init__.py": "",
    "simulation/runs/viewer/page.py": "from personasim.simulation.runs.tools import replay\n",
    "simulation/runs/sweeps/__init__.py": "",
    "simulation/runs/sweeps/sweep.py": "from personasim.simulation.runs.viewer import page\n",
}


def test_the_order_within_runs_on_a_synthetic_tree(tmp_path: Path) -> None:
    graph = import_graph(write_tree(tmp_path, RUNS_TREE))
    assert upward_imports(graph) == [
        "simulation.runs.lifecycle.run_dir line 2 imports simulation.runs.tools.replay",
        "simulation.runs.sweeps.sweep line 1 imports simulation.runs.viewer.page",
    ]


def test_the_length_and_package_checks_on_a_synthetic_tree(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "agents/__init__.py": "",
            "agents/long.py": "x = 1\n" * (MAX_LINES + 1),
            "agents/short.py": "x = 1\n" * MAX_LINES,
            "scenarios/paper/__init__.py": "",
            "scenarios/data_only/notes.py": "",
        },
    )
    assert long_modules(tmp_path) == {"agents/long.py": MAX_LINES + 1}
    declared = ["personasim.agents", "personasim.agents", "personasim.scenarios.data_only"]
    assert package_mismatch(declared, tmp_path) == {
        "listed, no __init__.py": ["personasim.scenarios.data_only"],
        "__init__.py, not listed": ["personasim.scenarios.paper"],
        "listed twice": ["personasim.agents"],
    }


@cache
def graph() -> dict[str, dict[str, list[int]]]:
    """The source tree's import graph, built when a test first asks, not at collection."""
    return import_graph()


def test_the_scan_sees_the_real_tree() -> None:
    """Guards against a scan that silently finds nothing."""
    assert {package for package in PACKAGES} <= set(graph())
    assert "simulation.log.events" in graph()["simulation.log.sqlite_store"]
    population = graph()["scenarios.trust.population"]
    assert {"simulation", "scenarios.trust.metrics", "environments.trust_game.transfer"} <= set(
        population
    )
    # The core's agent, environment and model name each other for annotations only.
    annotated = import_graph(type_checking=True)
    assert "simulation.core.model" in annotated["simulation.core.agent"]
    assert "simulation.core.model" not in graph()["simulation.core.agent"]


def test_no_import_cycle() -> None:
    found = cycles(graph())
    assert found == [], "import cycles (imports inside functions count):\n" + "\n".join(
        describe_cycle(graph(), component) for component in found
    )


def test_the_kernel_imports_downward_only() -> None:
    found = upward_imports(import_graph(type_checking=True))
    order = f"{' ← '.join(KERNEL_ORDER)}; runs: {' ← '.join(RUNS_ORDER)}"
    assert found == [], f"kernel order is {order}:\n" + "\n".join(found)


def test_no_module_over_500_lines() -> None:
    found = long_modules()
    assert found == {}, f"modules over {MAX_LINES} lines (split them by concern):\n" + "\n".join(
        f"{name}: {n}" for name, n in sorted(found.items())
    )


@pytest.mark.parametrize(
    "key", ["listed, no __init__.py", "__init__.py, not listed", "listed twice"]
)
def test_setup_finds_every_package(key: str) -> None:
    """setup.py's discovery (pyproject lists no packages by hand) against this file's walk."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = pyproject["tool"]["setuptools"]
    assert setuptools["package-dir"] == {f"{OWN}.{name}": name for name in PACKAGES}
    assert "packages" not in setuptools  # found by setup.py, not kept by hand
    spec = importlib.util.spec_from_file_location("personasim_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # defines the discovery; setup() runs only as __main__
    assert package_mismatch(setup.discovered_packages(ROOT))[key] == []
