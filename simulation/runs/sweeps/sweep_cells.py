"""One cell of a sweep and how it is run: what the local and the Ray executors share.

Both `sweep.py` (which plans the cells and runs them here) and `ray_sweep.py` (which runs them as
Ray tasks) import this module; neither imports the other's internals, so the two executors are
not a cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from personasim.simulation.core.scenario import Scenario
from personasim.simulation.llm.chat import Backend
from personasim.simulation.llm.limiter import EndpointLimiter
from personasim.simulation.runs.lifecycle.run_config import RunConfig
from personasim.simulation.runs.lifecycle.run_dir import MANIFEST_FILE, RunResult
from personasim.simulation.runs.lifecycle.scenario_file import load_scenario_file
from personasim.simulation.runs.runner import run_scenario

__all__ = ["CellFailure", "ScenarioRef", "SweepCell", "run_cell"]

ScenarioRef = str | tuple[str, str] | type[Scenario]
"""How a cell names its scenario so that another process can load it: a registered name, a
scenario file as (path, class name), or a class importable by reference."""


@dataclass(frozen=True)
class SweepCell:
    """One run of a sweep: a model, one combination of the varied values and the seed."""

    name: str
    model: str
    point: dict[str, Any]
    params: dict[str, Any]
    """Every scenario parameter as given (the cell validates them again where it runs)."""
    run_dir: Path
    seed: int | None = None
    """The cell's seed when the sweep varies seeds (else the run options' `seed`)."""


@dataclass(frozen=True)
class CellFailure:
    """A cell that failed on every attempt; its run directory can be resumed."""

    cell: str
    run_dir: Path
    error: str


def run_cell(
    scenario: ScenarioRef,
    cell: SweepCell,
    config: RunConfig,
    limiter_for: Callable[[Backend], EndpointLimiter | None] | None = None,
    console: Console | None = None,
) -> RunResult:
    """Run one cell into its directory, resuming what an earlier attempt left there; the
    sweep's endpoint options that none of the cell's models uses do not reach it."""
    if isinstance(scenario, tuple):
        scenario = load_scenario_file(*scenario)
    seed = config.seed if cell.seed is None else cell.seed
    cell_config = replace(
        config,
        model=cell.model,
        out=cell.run_dir,
        resume=(cell.run_dir / MANIFEST_FILE).exists(),
        seed=seed,
    ).for_its_models()
    return run_scenario(
        scenario, cell.params, config=cell_config, limiter_for=limiter_for, console=console
    )
