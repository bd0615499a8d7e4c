"""`personasim sweep SCENARIO`: one scenario over models and parameter values, one table."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import (
    NOT_VALID,
    add_run_arguments,
    err,
    fail,
    out,
    run_config,
    seed_list,
)
from personasim.simulation.cli.scenario_args import add_scenario_command, scenario_arguments
from personasim.simulation.core.scenario import ScenarioError, split_list

__all__ = ["EXECUTORS", "MAX_CELLS", "add_sweep_command"]

MAX_CELLS = 10_000
"""Runs one sweep makes (models × --vary values × seeds): each is a run directory."""

EXECUTORS = ("local", "ray")
"""`run_sweep`'s executors (`simulation.runs.sweeps.sweep.EXECUTORS`, which imports the runner;
a test keeps the two equal)."""


def add_sweep_command(commands: Any) -> None:
    sweep = add_scenario_command(
        commands,
        "sweep",
        "Run SCENARIO for every model and every combination of --vary values "
        "(each an ordinary run under --out), then write OUT/combined.csv and .md. "
        "Other scenario parameters go as --name value.",
        help="one scenario over models and parameter values, into one combined table",
    )
    sweep.add_argument("scenario", help="a scenario's name, or a .py file that defines one")
    sweep.add_argument("--models", default="scripted", help="comma-separated model specs")
    sweep.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a parameter and its values (repeatable)",
    )
    sweep.add_argument(
        "--seeds",
        type=seed_list,
        metavar="S1,S2",
        help="run every cell once per seed (a dimension of the sweep; replaces --seed)",
    )
    sweep.add_argument("--out", type=Path, required=True, help="folder for the runs and tables")
    sweep.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: cells one after another; ray: each cell a Ray task (the ray extra), "
        "endpoint limits held across all cells",
    )
    sweep.add_argument(
        "--ray-address", help="Ray cluster to join (default: a local one; see docs/sweeps.md)"
    )
    add_run_arguments(sweep)
    sweep.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.lifecycle.scenario_file import resolve_scenario
    from personasim.simulation.runs.sweeps.sweep import run_sweep

    grid = {}
    for item in args.vary:
        name, sep, values = item.partition("=")
        if not sep or not values:
            raise ScenarioError(f"--vary {item!r}: use NAME=V1,V2 (e.g. endowment=10,44,100)")
        grid[name.replace("-", "_")] = values.split(",")
    models = [m for m in split_list(args.models) if m]
    _check_size(grid, len(models), len(args.seeds or [0]))
    result = run_sweep(
        args.scenario,
        models,
        grid,
        scenario_arguments(args, extra, resolve_scenario(args.scenario)),
        out=args.out,
        executor=args.executor,
        ray_address=args.ray_address,
        seeds=args.seeds,
        config=run_config(args),
        console=err,
    )
    out.print(f"{len(result.runs)} runs under {result.directory}")
    if result.failed:
        for failure in result.failed:
            err.print(f"cell {failure.cell} failed: {failure.error}", markup=False)
        names = ", ".join(failure.cell for failure in result.failed)
        return fail(
            f"{len(result.failed)} of {len(result.failed) + len(result.runs)} cells failed "
            f"({names}); no combined table written; the same command resumes them",
            1,
        )
    for report in result.reports:
        out.print(f"  {report}")
    invalid = [str(run.run_dir) for run in result.runs if not run.valid]
    if invalid:
        out.print(f"NOT VALID (failure rate over the limit): {', '.join(invalid)}")
        return NOT_VALID
    return 0


def _check_size(grid: dict[str, list[str]], models: int, seeds: int) -> None:
    """A grid of more than `MAX_CELLS` runs is refused before its combinations are listed."""
    cells = models * seeds * math.prod(len(values) for values in grid.values())
    if cells > MAX_CELLS:
        sizes = " × ".join([str(models), *(str(len(v)) for v in grid.values()), str(seeds)])
        raise ScenarioError(
            f"the sweep has {cells:,} cells (models × --vary values × seeds: {sizes}); the "
            f"maximum is {MAX_CELLS:,} runs; split it into several sweeps"
        )
