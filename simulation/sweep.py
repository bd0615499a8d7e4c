"""Sweeps: one scenario over several models and parameter values, into one combined table.

Each combination is an ordinary run in its own directory under the sweep's folder, so every
run can be replayed, re-scored or resumed on its own. Runs share the response cache, so a
repeated sweep makes no model calls, and an interrupted sweep continues where it stopped: a
complete run is reused, an interrupted one resumed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .runner import MANIFEST_FILE, RunResult, run_scenario
from .scenario import Scenario
from .scenario_file import resolve_scenario
from .tables import write_table

__all__ = ["SweepResult", "run_sweep"]


@dataclass
class SweepResult:
    directory: Path
    runs: list[RunResult]
    rows: list[dict[str, Any]]
    reports: list[Path]


def run_sweep(
    scenario: str | Path | type[Scenario],
    models: Sequence[str],
    grid: Mapping[str, Sequence[Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    out: str | Path,
    **run_options: Any,
) -> SweepResult:
    """Run every (model, grid point) combination; write `combined.csv` / `combined.md`.

    `run_options` are passed to each `run_scenario` call (seed, base_url, concurrency, ...).
    """
    scenario_cls = resolve_scenario(str(scenario)) if isinstance(scenario, str | Path) else scenario
    directory = Path(out)
    grid = dict(grid or {})
    points = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    # Validate every combination before the first run starts; label rows with typed values.
    checked = [scenario_cls.parse_params({**(params or {}), **point}) for point in points]
    runs, rows = [], []
    for model in models:
        for point, point_params in zip(points, checked, strict=True):
            run_dir = directory / _run_name(model, point)
            resume = (run_dir / MANIFEST_FILE).exists()
            result = run_scenario(
                scenario_cls, point_params, model=model, out=run_dir, resume=resume, **run_options
            )
            runs.append(result)
            labels = {"model": model, **{name: getattr(point_params, name) for name in point}}
            summary = scenario_cls.summary_rows(result.metrics["metrics"])
            rows += [{**labels, **row} for row in summary]
    directory.mkdir(parents=True, exist_ok=True)
    reports = write_table(rows, directory, "combined")
    reports += scenario_cls.write_sweep_reports(rows, list(grid), directory)
    return SweepResult(directory, runs, rows, reports)


def _run_name(model: str, point: Mapping[str, Any]) -> str:
    parts = [model, *(f"{k}={v}" for k, v in point.items())]
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "-", "__".join(parts))
