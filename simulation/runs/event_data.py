"""A run's events as data: a pandas frame with one row per event, and Parquet files of it.

The frame has the log's columns (docs/events.md) and the payload twice: whole, in `payload`
(a dict; JSON text in Parquet, so nothing is lost), and flattened into `payload.<key>`
columns, two levels deep (`payload.response.usage.prompt_tokens`), for filtering and
grouping without parsing. A flattened column keeps its values' type when they share one
(bool, integer, number, text); a column whose values are lists, objects or a mix of types
holds each value as JSON text. A sweep's events are one frame with a `cell` column (the run
directory's name), and one Parquet file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.simulation.log.events import EVENT_COLUMNS, Event
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.run_dir import EVENTS_FILE, MANIFEST_FILE, RunError, read_manifest

__all__ = [
    "PARQUET_FILE",
    "events_table",
    "run_events",
    "sweep_cells",
    "sweep_events",
    "write_parquet",
]

PARQUET_FILE = "events.parquet"
FLATTEN_LEVELS = 2
PREFIX = "payload."


def events_table(events: Iterable[Event]) -> pd.DataFrame:
    """One row per event: the log's columns, `payload` as a dict, and flattened payload fields."""
    rows = [(e.seq, e.round, e.agent_id, e.kind, e.scope, e.ts, e.payload) for e in events]
    frame = pd.DataFrame(rows, columns=EVENT_COLUMNS).astype({"round": "Int64"})
    if frame.empty:
        return frame
    flat = [_flatten(payload, FLATTEN_LEVELS) for payload in frame["payload"]]
    names = sorted({name for fields in flat for name in fields})
    columns = {
        PREFIX + name: _typed(pd.Series([f.get(name) for f in flat], dtype=object))
        for name in names
    }
    return pd.concat([frame, pd.DataFrame(columns, index=frame.index)], axis=1)


def run_events(run_dir: str | Path) -> pd.DataFrame:
    """The events of the run in `run_dir`, read from its log (`events_table`)."""
    run_dir = Path(run_dir)
    read_manifest(run_dir)  # a clear error when this is not a run directory
    if not (run_dir / EVENTS_FILE).is_file():
        raise RunError(f"{run_dir}: no {EVENTS_FILE} (the run's event log); nothing to read")
    with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        return events_table(store.read())


def sweep_cells(sweep_dir: str | Path) -> list[Path]:
    """The run directories of a sweep (its subfolders with a manifest), by name."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise RunError(f"{sweep_dir}: no such sweep directory")
    cells = sorted(p for p in sweep_dir.iterdir() if (p / MANIFEST_FILE).is_file())
    if not cells:
        raise RunError(f"{sweep_dir}: not a sweep directory (no run directories in it)")
    return cells


def sweep_events(sweep_dir: str | Path) -> pd.DataFrame:
    """Every cell's events in one frame, `cell` (the run directory's name) first."""
    frames = []
    for cell in sweep_cells(sweep_dir):
        frame = run_events(cell)
        frame.insert(0, "cell", cell.name)
        frames.append(frame)
    combined = pd.concat(frames, ignore_index=True)
    flat = [c for c in combined.columns if c.startswith(PREFIX)]
    # A field typed one way in one cell and another way in the next is retyped as a whole.
    return combined.assign(**{c: _typed(combined[c]) for c in flat})


def write_parquet(frame: pd.DataFrame, path: str | Path) -> int:
    """Write `frame` to `path` (payload as JSON text), atomically; returns the rows written."""
    path = Path(path)
    table = frame.assign(payload=[_json(p) for p in frame["payload"]])
    partial = path.with_name(path.name + ".partial")
    try:
        table.to_parquet(partial, index=False, engine="pyarrow")
        partial.replace(path)
    except OSError as exc:
        reason = exc.strerror or exc
        raise RunError(f"cannot write {path} ({reason}); choose another --output") from None
    finally:
        partial.unlink(missing_ok=True)
    return len(table)


def _flatten(payload: dict[str, Any], levels: int, prefix: str = "") -> dict[str, Any]:
    """`{"response": {"usage": {"prompt_tokens": 3}}}` → `{"response.usage.prompt_tokens": 3}`,
    objects opened `levels` deep (an empty one is kept as a value)."""
    fields: dict[str, Any] = {}
    for key, value in payload.items():
        if isinstance(value, dict) and value and levels > 0:
            fields.update(_flatten(value, levels - 1, f"{prefix}{key}."))
        else:
            fields[prefix + key] = value
    return fields


def _typed(column: pd.Series) -> pd.Series:
    """One type per column: the values' own when they share one, else JSON text."""
    kinds = {_kind(v) for v in column if v is not None and v is not pd.NA}
    if kinds == {"bool"}:
        return column.astype("boolean")
    if kinds == {"int"}:
        return column.astype("Int64")
    if kinds and kinds <= {"int", "float"}:
        return column.astype("float64")
    if kinds == {"str"}:
        return column.astype("string")
    return column.map(_json, na_action="ignore").astype("string")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "str" if isinstance(value, str) else "json"


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
