"""Sweeps: one scenario over several models and parameter values, into one combined table.

Each combination (a *cell*: model × parameter values × seed) is an ordinary run in its own
directory under the sweep's folder, so every run can be replayed, re-scored or resumed on its
own. Runs share the response cache, so a repeated sweep makes no model calls, and an
interrupted sweep continues where it stopped: a complete run is reused, an interrupted one
resumed. Cells run one after another (`executor="local"`) or as Ray tasks
(`executor="ray"`, `simulation/runs/sweeps/ray_sweep.py`); both give the same runs and tables. A
cell and how it is run are `sweep_cells.py`, which both executors import.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console

from personasim.simulation.core.scenario import Scenario
from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.model_spec import parse_model_spec
from personasim.simulation.runs.lifecycle.run_config import RunConfig
from personasim.simulation.runs.lifecycle.run_dir import RunError, RunResult
from personasim.simulation.runs.lifecycle.run_lock import RunLockedError
from personasim.simulation.runs.lifecycle.scenario_file import (
    is_scenario_path,
    resolve_scenario,
    scenario_file_record,
)
from personasim.simulation.runs.sweeps.sweep_cells import (
    CellFailure,
    ScenarioRef,
    SweepCell,
    run_cell,
)
from personasim.simulation.runs.sweeps.sweep_table import write_combined

__all__ = ["EXECUTORS", "CellFailure", "SweepCell", "SweepResult", "run_cell", "run_sweep"]

Executor = Literal["local", "ray"]
EXECUTORS: tuple[str, ...] = ("local", "ray")


@dataclass
class SweepResult:
    directory: Path
    runs: list[RunResult]
    rows: list[dict[str, Any]]
    reports: list[Path]
    failed: list[CellFailure] = field(default_factory=list)
    """Cells that failed (on Ray: any error; here: a run directory another process was
    writing); the combined tables are written only when none did."""


def run_sweep(
    scenario: str | Path | type[Scenario],
    models: Sequence[str],
    grid: Mapping[str, Sequence[Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    out: str | Path,
    executor: Executor = "local",
    ray_address: str | None = None,
    seeds: Sequence[int] | None = None,
    config: RunConfig | None = None,
    console: Console | None = None,
    **options: Any,
) -> SweepResult:
    """Run every (model, grid point, seed) combination; write `combined.csv` / `combined.md`.

    `seeds` makes the seed a dimension: each cell runs with its own (and its name and rows say
    which); without it every cell runs with the config's seed. With several seeds the
    scenario's own sweep tables are written once per seed, under `seed=<N>/`, so a paper's
    table never mixes (or silently drops) repetitions; `combined.csv` has every row.

    `config` (or the flat `options`: seed, base_url, concurrency, ...; see
    `RunConfig.from_options`) is each cell's, with the cell's model, run directory and seed;
    `console` shows the local cells' progress. `executor="ray"` runs each cell as a Ray task
    (on the cluster at `ray_address`, else the one this process is connected to, else a local
    one) with each endpoint's `concurrency` and `requests_per_minute` held across all cells;
    see docs/sweeps.md.
    """
    if executor not in EXECUTORS:
        raise RunError(f"executor {executor!r}: use one of {', '.join(EXECUTORS)}")
    if ray_address is not None and executor != "ray":
        raise RunError("--ray-address is for --executor ray")
    config = RunConfig.from_options(config, **options)
    if executor == "ray" and config.workers > 1:
        raise RunError(
            "--workers is for one machine: with --executor ray the cells are spread over the "
            "cluster and share each endpoint's limits through Ray; use --workers 1"
        )
    scenario_cls = resolve_scenario(str(scenario)) if isinstance(scenario, str | Path) else scenario
    directory = Path(out)
    grid = dict(grid or {})
    points = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    # Validate every combination before the first run starts; label rows with typed values.
    checked = [scenario_cls.parse_params({**(params or {}), **point}) for point in points]
    for model in models:  # every spec read before the first cell runs
        try:
            parse_model_spec(model)
        except ModelSpecError as exc:
            raise RunError(str(exc)) from None
    config.check_models([*models, *(s for specs in config.roles.values() for s in specs)])
    if seeds is not None and (not seeds or len(set(seeds)) != len(seeds)):
        raise RunError(f"seeds {list(seeds)}: give one or more, each once")
    seed_list: list[int | None] = list(seeds) if seeds is not None else [None]
    cells = [
        SweepCell(
            _run_name(model, point, seed),
            model,
            point,
            {**(params or {}), **point},
            directory / _run_name(model, point, seed),
            seed,
        )
        for model in models
        for point in points
        for seed in seed_list
    ]
    failed: list[CellFailure] = []
    if executor == "ray":
        # Ray is an optional extra; ray_sweep imports sweep_cells, never this module.
        from personasim.simulation.runs.sweeps.ray_sweep import run_cells_on_ray

        results, failed = run_cells_on_ray(
            _scenario_ref(scenario, scenario_cls), cells, config, address=ray_address
        )
    else:
        results, failed = _run_cells_here(scenario_cls, cells, config, console)
    runs, rows = [], []
    typed = [checked[i] for _ in models for i in range(len(points)) for _ in seed_list]
    for cell, point_params, result in zip(cells, typed, results, strict=True):
        if result is None:
            continue
        runs.append(result)
        labels = {"model": cell.model, **{name: getattr(point_params, name) for name in grid}}
        if cell.seed is not None:
            labels["seed"] = cell.seed
        summary = scenario_cls.summary_rows(result.metrics["metrics"])
        rows += [{**labels, **row} for row in summary]
    directory.mkdir(parents=True, exist_ok=True)
    if failed:  # a table missing cells would pass for the sweep's result
        return SweepResult(directory, runs, rows, [], failed)
    labels = ["model", *grid, *(["seed"] if seeds is not None else [])]
    counts = scenario_cls.metrics.summary_counts if scenario_cls.metrics else None
    reports = write_combined(rows, directory, labels, counts)
    if len(seed_list) == 1:
        reports += scenario_cls.write_sweep_reports(rows, list(grid), directory)
    else:
        for seed in seed_list:
            per_seed = [row for row in rows if row["seed"] == seed]
            folder = directory / f"seed={seed}"
            folder.mkdir(exist_ok=True)
            reports += scenario_cls.write_sweep_reports(per_seed, list(grid), folder)
    return SweepResult(directory, runs, rows, reports)


def _run_cells_here(
    scenario_cls: type[Scenario],
    cells: Sequence[SweepCell],
    config: RunConfig,
    console: Console | None,
) -> tuple[list[RunResult | None], list[CellFailure]]:
    """The cells one after another; a cell whose directory another process is writing fails
    with that message and the others go on."""
    results: list[RunResult | None] = []
    failed: list[CellFailure] = []
    for cell in cells:
        try:
            results.append(run_cell(scenario_cls, cell, config, console=console))
        except RunLockedError as exc:
            results.append(None)
            failed.append(CellFailure(cell.name, cell.run_dir, str(exc)))
    return results, failed


def _scenario_ref(scenario: str | Path | type[Scenario], cls: type[Scenario]) -> ScenarioRef:
    """A reference another process can load: a file scenario by path, else as given."""
    if isinstance(scenario, str | Path) and not is_scenario_path(str(scenario)):
        return str(scenario)
    record = scenario_file_record(cls)
    return (record["path"], record["class"]) if record else cls


def _run_name(model: str, point: Mapping[str, Any], seed: int | None = None) -> str:
    parts = [model, *(f"{k}={v}" for k, v in point.items())]
    if seed is not None:
        parts.append(f"seed={seed}")
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "-", "__".join(parts))
