"""A run's events as data: a pandas frame with one row per event, and Parquet files of it.

The frame has the log's columns (docs/events.md) and the payload twice: whole, in `payload`
(a dict; JSON text in Parquet, so nothing is lost), and flattened into `payload.<key>`
columns, two levels deep (`payload.response.usage.prompt_tokens`), for filtering and
grouping without parsing. Each flattened column gets one type by `typed_column`'s rule
(docs/sweeps.md): booleans → boolean, integers → Int64, integers and numbers → float64,
text → string, anything else (lists, objects, any other mix) → each value as JSON text.
A sweep's events are one frame, flattened and typed over all cells at once, and one Parquet
file; its first column is `cell` (the run directory's name), then what the cell ran (`model`,
each varied parameter, from the cell's manifest: `sweep_labels.py`). `typed_column` is
`typed_columns.py`'s, imported here for the callers that know it from this module.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.simulation.log.events import EVENT_COLUMNS, Event
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_dir import (
    EVENTS_FILE,
    MANIFEST_FILE,
    RunError,
    read_manifest,
)
from personasim.simulation.runs.tools.sweep_labels import cell_labels, with_cell_labels
from personasim.simulation.runs.tools.typed_columns import typed_column

__all__ = [
    "PARQUET_FILE",
    "events_table",
    "read_run_log",
    "run_events",
    "sweep_cells",
    "sweep_events",
    "typed_column",
    "write_parquet",
]

PARQUET_FILE = "events.parquet"
FLATTEN_LEVELS = 2
PREFIX = "payload."


def events_table(events: Iterable[Event]) -> pd.DataFrame:
    """One row per event: the log's columns, `payload` as a dict, and flattened payload fields."""
    return _with_payload_fields(_log_columns(events))


def _log_columns(events: Iterable[Event]) -> pd.DataFrame:
    rows = [(e.seq, e.round, e.agent_id, e.kind, e.scope, e.ts, e.payload) for e in events]
    return pd.DataFrame(rows, columns=EVENT_COLUMNS).astype({"round": "Int64"})


def _with_payload_fields(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` and its payloads' fields as typed `payload.<key>` columns (from the raw values,
    so a field is typed once over every row, whichever run each row came from)."""
    if frame.empty:
        return frame
    flat = [_flatten(payload, FLATTEN_LEVELS) for payload in frame["payload"]]
    names = sorted({name for fields in flat for name in fields})
    columns = {PREFIX + name: typed_column([f.get(name) for f in flat]) for name in names}
    return pd.concat([frame, pd.DataFrame(columns, index=frame.index)], axis=1)


def run_events(run_dir: str | Path) -> pd.DataFrame:
    """The events of the run in `run_dir`, read from its log (`events_table`)."""
    return events_table(read_run_log(run_dir))


def read_run_log(run_dir: str | Path) -> list[Event]:
    """Every event of the run in `run_dir`, in `seq` order; a clear error when there is none."""
    run_dir = Path(run_dir)
    read_manifest(run_dir)  # a clear error when this is not a run directory
    if not (run_dir / EVENTS_FILE).is_file():
        raise RunError(f"{run_dir}: no {EVENTS_FILE} (the run's event log); nothing to read")
    with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        return list(store.read())


def sweep_cells(sweep_dir: str | Path) -> list[Path]:
    """The run directories of a sweep (its subfolders with a manifest), by name; a subfolder
    with an event log but no manifest is a damaged cell, an error naming the missing file
    (leaving it out would drop its rows silently)."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise RunError(f"{sweep_dir}: no such sweep directory")
    folders = sorted(p for p in sweep_dir.iterdir() if p.is_dir())
    for folder in folders:
        if (folder / EVENTS_FILE).is_file() and not (folder / MANIFEST_FILE).is_file():
            raise RunError(
                f"{folder / MANIFEST_FILE}: missing, beside the cell's {EVENTS_FILE}; restore "
                "it, or move the cell out of the sweep directory"
            )
    cells = [p for p in folders if (p / MANIFEST_FILE).is_file()]
    if not cells:
        raise RunError(f"{sweep_dir}: not a sweep directory (no run directories in it)")
    return cells


def sweep_events(sweep_dir: str | Path) -> pd.DataFrame:
    """Every cell's events in one frame: `cell` (the run directory's name), then what the cell
    ran (`model`, each varied parameter; `sweep_labels.cell_labels`), then the events."""
    frames = []
    cells = sweep_cells(sweep_dir)
    labels = cell_labels(cells)
    for cell in cells:
        frame = _log_columns(read_run_log(cell))
        frame.insert(0, "cell", cell.name)
        frames.append(frame)
    # Fields are typed over all cells' raw values at once, never retyped from typed columns.
    return with_cell_labels(_with_payload_fields(pd.concat(frames, ignore_index=True)), labels)


def write_parquet(frame: pd.DataFrame, path: str | Path) -> int:
    """Write `frame` to `path` (a `payload` column as JSON text), atomically; returns the rows
    written."""
    path = Path(path)
    table = (
        frame.assign(payload=[_json(p) for p in frame["payload"]]) if "payload" in frame else frame
    )
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


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
