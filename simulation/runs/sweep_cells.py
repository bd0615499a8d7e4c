"""One cell of a sweep and how it is run: what the local and the Ray executors share.

Both `sweep.py` (which plans the cells and runs them here) and `ray_sweep.py` (which runs them as
Ray tasks) import this module; neither imports the other's internals, so the two executors are
not a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from personasim.simulation.core.scenario import Scenario
from personasim.simulation.llm.chat import Backend
from personasim.simulation.llm.limiter import EndpointLimiter
from personasim.simulation.llm.model_spec import parse_model_spec, pool_name, unused_run_options
from personasim.simulation.runs.run_dir import MANIFEST_FILE, RunResult
from personasim.simulation.runs.runner import RunSettings, endpoint_options, run_scenario
from personasim.simulation.runs.scenario_file import load_scenario_file

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
    run_options: Mapping[str, Any],
    limiter_for: Callable[[Backend], EndpointLimiter | None] | None = None,
) -> RunResult:
    """Run one cell into its directory, resuming what an earlier attempt left there."""
    if isinstance(scenario, tuple):
        scenario = load_scenario_file(*scenario)
    resume = (cell.run_dir / MANIFEST_FILE).exists()
    options = dict(run_options) if cell.seed is None else {**run_options, "seed": cell.seed}
    options = _for_cell(cell.model, options)
    return run_scenario(
        scenario,
        cell.params,
        model=cell.model,
        out=cell.run_dir,
        resume=resume,
        limiter_for=limiter_for,
        **options,
    )


def _for_cell(model: str, options: dict[str, Any]) -> dict[str, Any]:
    """A sweep's options without the endpoint options none of this cell's models use (the
    sweep checked that some cell uses each): `--base-url` and `--endpoints` do not reach a
    scripted cell."""
    specs = [model, *(s for specs in (options.get("roles") or {}).values() for s in specs)]
    settings = options.get("settings") or RunSettings()
    unused = unused_run_options(specs, endpoint_options(options.get("base_url"), settings))
    if "base_url" in unused:
        options["base_url"] = None
    if not any(pool_name(parse_model_spec(spec)) for spec in specs):
        options["endpoints"] = None  # no model of this cell names a pool
    if "response_format" in unused:
        options["settings"] = replace(settings, response_format="text")
    return options
