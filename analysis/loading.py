"""Runs and sweeps as pandas frames, for analysis in a notebook or script.

Thin, documented entry points over `personasim.simulation.runs.tools.event_data`, which the
`personasim export --format parquet` command writes from, so a frame loaded here and a Parquet
file exported there hold the same rows and columns (`payload` is a dict here, JSON text there;
`load_agents` is the export's `agents.parquet`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from personasim.simulation.runs.tools.agent_data import run_agents
from personasim.simulation.runs.tools.event_data import run_events, sweep_events

__all__ = ["load_agents", "load_events", "load_sweep"]


def load_agents(run_dir: str | Path) -> pd.DataFrame:
    """One row per agent of the run in `run_dir`, from its event log: `agent_id`, `type`,
    `role`, `persona_id`, `trait.<name>`, each decision's value by task (`<task>`,
    `<task>.r<round>` over several rounds, or `<task>@<scope>` per unit of work with a
    `<task>.n` count where one round holds several), `failed_decisions` (why a value is missing),
    `decisions`, `failures`, `reasks`; see docs/sweeps.md ("Agents as data")."""
    return run_agents(run_dir)


def load_events(run_dir: str | Path) -> pd.DataFrame:
    """One row per event of the run in `run_dir`: `seq`, `round`, `agent_id`, `kind`, `scope`,
    `ts`, `payload` (a dict) and the payload's fields as `payload.<key>` columns (two levels
    deep, e.g. `payload.response.usage.prompt_tokens`); see docs/sweeps.md."""
    return run_events(run_dir)


def load_sweep(sweep_dir: str | Path) -> pd.DataFrame:
    """Every run of the sweep in `sweep_dir` in one frame (as `load_events`), with a first
    column `cell` (the run directory's name, e.g. `scripted__endowment=10`), then what each cell
    ran, read from its `manifest.json`: `model` (the spec, e.g. `scripted:drift=0.15`), one
    column per parameter the cells differ in, named and typed as the parameter
    (`endowment`: Int64), and `seed` when the cells' seeds differ; a parameter named like
    another column is `param.<name>`. See docs/sweeps.md ("What each cell ran")."""
    return sweep_events(sweep_dir)
