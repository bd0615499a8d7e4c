"""A paper is one package and nothing else (docs/scenarios.md): a minimal paper package — the
`personasim init` scaffold made a registered scenario, with its smoke parameters, in a project
whose pyproject names it under the `personasim.scenarios` entry-point group — is installed by
pip into a folder of its own, and `list`, `run`, `metrics --check`, `sweep` and the run's
summary all work with no edit to any file of personasim. Slow tier: pip builds and installs
the package (no dependencies; its build backend, setuptools, comes from the package index)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from personasim.simulation.cli.init_command import scenario_source

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "ultimatum-paper"
version = "0.1.0"

[project.entry-points."personasim.scenarios"]
ultimatum = "ultimatum_paper.scenario"

[tool.setuptools]
packages = ["ultimatum_paper"]
"""


def paper_package(tmp_path: Path) -> Path:
    """The project folder: the scaffold as `ultimatum_paper/scenario.py`, registered by name."""
    project = tmp_path / "ultimatum-paper"
    package = project / "ultimatum_paper"
    package.mkdir(parents=True)
    source = scenario_source(Path("ultimatum.py"))  # what `personasim init ultimatum` writes
    assert "\nclass Ultimatum(Scenario):" in source
    source = source.replace(
        "\nclass Ultimatum(Scenario):", "\n@register_scenario\nclass Ultimatum(Scenario):"
    )
    source = source.replace(
        "    scripted_behaviour,\n", "    register_scenario,\n    scripted_behaviour,\n"
    )
    (package / "scenario.py").write_text(source, encoding="utf-8")
    (package / "__init__.py").write_text('"""The ultimatum paper."""\n', encoding="utf-8")
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return project


def installed(project: Path, target: Path) -> dict[str, str]:
    """pip installs the project into `target`; the environment the CLI runs in sees it there."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
         str(project)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert list(target.glob("ultimatum_paper-*.dist-info/entry_points.txt"))
    return {**os.environ, "PYTHONPATH": str(target)}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "personasim.simulation.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def test_a_paper_package_runs_everywhere_with_no_edit_outside_it(tmp_path: Path) -> None:
    before = {p: p.stat().st_mtime for p in Path(__file__).parents[1].rglob("*.py")}
    env = installed(paper_package(tmp_path), tmp_path / "site")

    listed = cli(env, "list")
    assert listed.returncode == 0, listed.stderr
    assert "ultimatum — personas split a pot" in listed.stdout

    out = tmp_path / "run"
    ran = cli(env, "run", "ultimatum", "--n-personas", "3", "--out", str(out), "--no-cache")
    assert ran.returncode == 0, ran.stderr
    assert "offers, mean" in ran.stdout and "personasim view" in ran.stdout  # its summary
    assert (out / "reports" / "offers_by_level.md").exists()

    checked = cli(env, "metrics", str(out), "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr

    swept = cli(env, "sweep", "ultimatum", "--vary", "pot=10,20", "--out", str(tmp_path / "sweep"),
                "--n-personas", "3")  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    cells = sorted(p.name for p in (tmp_path / "sweep").iterdir() if p.is_dir())
    assert len([c for c in cells if (tmp_path / "sweep" / c / "manifest.json").exists()]) == 2
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scenario"] == "ultimatum" and manifest["status"] == "complete"

    after = {p: p.stat().st_mtime for p in Path(__file__).parents[1].rglob("*.py")}
    assert after == before  # nothing of personasim was edited or written
