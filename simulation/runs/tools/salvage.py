"""`personasim export RUN --salvage`: the events SQLite can still read from a damaged log,
copied into a fresh run directory that `--resume` then finishes.

Only a whole prefix of the log is kept: events from `seq` 1 up to the first row that cannot be
read (or the first gap). A unit of work is committed in one transaction, so its events are
consecutive; when the log was cut, the last unit in the kept prefix may be cut too, so it is
left out and the resumed run does it again. Nothing is guessed: a row is copied as read or not
at all.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personasim.simulation.log.events import INCIDENT_SCOPE, MAIN_SCOPE, Event
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_dir import (
    EVENTS_FILE,
    RunError,
    read_manifest,
    write_manifest,
)
from personasim.simulation.runs.lifecycle.run_lock import RunLock

__all__ = ["SalvageResult", "salvage_run"]

_BATCH = 500
"""Events per transaction when the kept ones are written to the new log."""


@dataclass(frozen=True)
class SalvageResult:
    target: Path
    kept: int
    """Events copied into the new run directory."""
    left_out: int
    """Readable events not copied: after the first unreadable row or gap, or the last unit of
    work before it."""
    stopped_by: str | None
    """Why reading stopped before the end of the log (None: every row was read)."""


def salvage_run(run_dir: str | Path, target: str | Path | None = None) -> SalvageResult:
    """Copy the readable prefix of `run_dir`'s log into `target` (default `RUN-salvaged`)."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    source = run_dir / EVENTS_FILE
    if not source.is_file():
        raise RunError(f"{source}: the log is missing; there is nothing to salvage")
    rows, stopped_by, readable = _readable_prefix(source)
    if stopped_by is not None:
        rows = _without_last_unit(rows)
    if not rows:
        raise RunError(f"{source}: no event could be read ({stopped_by}); start a new run instead")
    target = Path(target) if target else _free_name(run_dir)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise RunError(f"{target} already exists and is not empty; choose another --output")
    target.mkdir(parents=True, exist_ok=True)
    with RunLock(target), SQLiteEventStore(target / EVENTS_FILE) as store:
        for start in range(0, len(rows), _BATCH):
            store.append(rows[start : start + _BATCH])
    for stale in ("log", "finished_at", "llm"):
        manifest.pop(stale, None)
    limits = ("max_failure_rate", "min_group_n")  # the counts are recomputed when it finishes
    manifest["validity"] = {k: v for k, v in manifest.get("validity", {}).items() if k in limits}
    manifest.update(
        status="interrupted",
        error=f"salvaged from a damaged log ({stopped_by or 'all rows readable'})",
        salvaged_from={
            "run": run_dir.name,
            "events_kept": len(rows),
            "events_left_out": readable - len(rows),
            "stopped_by": stopped_by,
        },
    )
    write_manifest(target, manifest)
    return SalvageResult(target, len(rows), readable - len(rows), stopped_by)


def _readable_prefix(path: Path) -> tuple[list[Event], str | None, int]:
    """The events from seq 1 up to the first unreadable row or gap; why reading stopped; how
    many rows were read in all."""
    events: list[Event] = []
    read = 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError as exc:
        return [], str(exc), 0
    stopped_by: str | None = None
    try:
        # A truncated file is refused whole unless SQLite may trust the file's own size over
        # its header's page count; this connection is read-only, so nothing is written.
        db.execute("PRAGMA writable_schema=ON")
        rows = db.execute(
            "SELECT seq, round, agent_id, kind, scope, ts, payload FROM events ORDER BY seq"
        )
        for seq, rnd, agent_id, kind, scope, ts, payload in rows:  # lazily: up to a bad page
            read += 1
            if stopped_by is None and seq != len(events) + 1:
                stopped_by = f"no event #{len(events) + 1}"
            if stopped_by is None:
                events.append(Event(kind, _payload(payload), rnd, agent_id, scope, ts))
    except (sqlite3.DatabaseError, ValueError) as exc:
        stopped_by = stopped_by or f"after event #{len(events)}: {exc}"
    finally:
        db.close()
    return events, stopped_by, read


def _payload(text: Any) -> dict[str, Any]:
    payload = json.loads(text)
    if not isinstance(payload, dict):
        raise ValueError("a payload that is not a JSON object")
    return payload


def _without_last_unit(events: list[Event]) -> list[Event]:
    """The events less the trailing run of one unit of work, which may have been cut."""
    end = len(events)
    while end and events[end - 1].scope == INCIDENT_SCOPE:
        end -= 1
    if not end or events[end - 1].scope == MAIN_SCOPE:
        return events[:end]
    scope = events[end - 1].scope
    while end and events[end - 1].scope == scope:
        end -= 1
    return events[:end]


def _free_name(run_dir: Path) -> Path:
    target, n = run_dir.with_name(f"{run_dir.name}-salvaged"), 1
    while target.exists():
        n += 1
        target = run_dir.with_name(f"{run_dir.name}-salvaged-{n}")
    return target
