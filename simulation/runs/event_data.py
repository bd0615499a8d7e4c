"""A run's events as data: a pandas frame with one row per event, and Parquet files of it.

The frame has the log's columns (docs/events.md) and the payload twice: whole, in `payload`
(a dict; JSON text in Parquet, so nothing is lost), and flattened into `payload.<key>`
columns, two levels deep (`payload.response.usage.prompt_tokens`), for filtering and
grouping without parsing. Each flattened column gets one type by `typed_column`'s rule
(docs/sweeps.md): booleans → boolean, integers → Int64, integers and numbers → float64,
text → string, anything else (lists, objects, any other mix) → each value as JSON text.
A sweep's events are one frame with a `cell` column (the run directory's name), flattened
and typed over all cells at once, and one Parquet file.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from personasim.simulation.log.events import EVENT_COLUMNS, Event
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.run_dir import EVENTS_FILE, MANIFEST_FILE, RunError, read_manifest

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
        frame = _log_columns(read_run_log(cell))
        frame.insert(0, "cell", cell.name)
        frames.append(frame)
    # Fields are typed over all cells' raw values at once, never retyped from typed columns.
    return _with_payload_fields(pd.concat(frames, ignore_index=True))


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


def typed_column(values: Iterable[Any]) -> pd.Series:
    """One type for a column of values (None, NaN and pd.NA are missing and fit any type):

    all booleans → `boolean`; all integers → `Int64`; integers and numbers → `float64`;
    all text → `string`; anything else — lists, objects, integers beyond 64 bits, booleans
    mixed with numbers, text mixed with anything — → `string` holding each value as JSON
    (`json.loads` reads any of them back). NumPy scalars count as their Python kinds.
    """
    values = [None if _missing(v) else v for v in values]
    kinds = {_kind(v) for v in values if v is not None}
    if kinds == {"bool"}:
        return pd.Series(pd.array(values, dtype="boolean"))
    if kinds == {"int"}:
        return pd.Series(pd.array([None if v is None else int(v) for v in values], "Int64"))
    if kinds == {"int", "float"} or kinds == {"float"}:
        return pd.Series([np.nan if v is None else float(v) for v in values], dtype="float64")
    if kinds == {"str"}:
        return pd.Series(pd.array(values, dtype="string"))
    encoded = [None if v is None else json.dumps(v, sort_keys=True, default=_plain) for v in values]
    return pd.Series(pd.array(encoded, dtype="string"))


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int" if -(2**63) <= int(value) < 2**63 else "json"
    if isinstance(value, numbers.Real):
        return "float"
    return "str" if isinstance(value, str) else "json"


def _plain(value: Any) -> Any:
    """NumPy scalars as Python ones, so `json.dumps` can write them."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
