"""`personasim export RUN_DIR`: the events as JSON lines or Parquet, or a damaged log's readable
events salvaged into a new run directory."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.cli.options import err, open_store, out

if TYPE_CHECKING:
    from personasim.simulation.log.sqlite_store import SQLiteEventStore

__all__ = ["add_export_command"]


def add_export_command(commands: Any) -> None:
    export = commands.add_parser("export", help="write the events in the documented schema")
    export.add_argument("run_dir", type=Path, help="a run directory (parquet: or a sweep's)")
    export.add_argument(
        "--format",
        choices=["jsonl", "parquet"],
        default="jsonl",
        help="jsonl: one JSON object per event; parquet: one row per event, payload fields "
        "flattened, a sweep's cells in one file, and agents.parquet beside it: one row per "
        "agent (docs/sweeps.md)",
    )
    export.add_argument(
        "--output",
        type=Path,
        help="file to write, - for stdout (jsonl only; default RUN_DIR/events.jsonl|parquet)",
    )
    export.add_argument(
        "--salvage",
        action="store_true",
        help="copy the events a damaged log can still read into a new run directory "
        "(--output, default RUN_DIR-salvaged) that --resume can finish",
    )
    export.set_defaults(handler=_export)


def _export(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.tools.replay import export_jsonl

    if args.salvage:
        return _salvage(args)
    if args.format == "parquet":
        return _export_parquet(args.run_dir, args.output)
    target = args.output or args.run_dir / "events.jsonl"
    with open_store(args.run_dir) as store:
        if str(target) == "-":  # stdout carries the events alone; the count goes to stderr
            if (written := _export_to_stdout(store)) is not None:
                err.print(f"{written} events written to stdout")
            return 0
        try:
            count = export_jsonl(store, target)
        except OSError as exc:
            reason = exc.strerror or exc
            raise RunError(f"cannot write {target} ({reason}); choose another --output") from None
    out.print(f"{count} events written to {target}")
    return 0


def _salvage(args: argparse.Namespace) -> int:
    """`export RUN --salvage`: the readable events of a damaged log into a new run directory."""
    from personasim.simulation.runs.lifecycle.run_dir import read_manifest
    from personasim.simulation.runs.tools.salvage import salvage_run

    result = salvage_run(args.run_dir, args.output)
    left = (
        f"; {result.left_out} readable events left out: the unit of work the damage may have "
        "cut, or rows after a gap"
        if result.left_out
        else ""
    )
    why = f" (reading stopped {result.stopped_by}{left})" if result.stopped_by else ""
    out.print(f"{result.kept} events copied to {result.target}{why}", markup=False)
    manifest = read_manifest(result.target)
    out.print(
        f"resume it with: personasim run {manifest['scenario']} --out {result.target} --resume "
        "and the run's original options",
        markup=False,
    )
    return 0


def _export_parquet(run_dir: Path, output: Path | None) -> int:
    """A run's events, or every cell's of a sweep (a folder of runs), as one Parquet file, and
    its agents (one row each) beside it."""
    from personasim.simulation.runs.lifecycle.run_dir import MANIFEST_FILE, RunError
    from personasim.simulation.runs.tools.agent_data import (
        AGENTS_PARQUET_FILE,
        run_agents,
        sweep_agents,
    )
    from personasim.simulation.runs.tools.event_data import (
        PARQUET_FILE,
        run_events,
        sweep_events,
        write_parquet,
    )

    if output is not None and str(output) == "-":
        raise RunError("--output -: Parquet is binary; name a file (stdout is for jsonl)")
    is_sweep = run_dir.is_dir() and not (run_dir / MANIFEST_FILE).exists()
    frame = sweep_events(run_dir) if is_sweep else run_events(run_dir)
    agents = sweep_agents(run_dir) if is_sweep else run_agents(run_dir)
    target = output or run_dir / PARQUET_FILE
    beside = (
        target.with_name(AGENTS_PARQUET_FILE)
        if target.name == PARQUET_FILE
        else target.with_name(f"{target.stem}.agents.parquet")
    )
    count = write_parquet(frame, target)
    agent_count = write_parquet(agents, beside)
    what = f" from {frame['cell'].nunique()} runs" if is_sweep else ""
    out.print(f"{count} events{what} written to {target}")
    out.print(f"{agent_count} agents written to {beside}")
    return 0


def _export_to_stdout(store: SQLiteEventStore) -> int | None:
    """The events on stdout; None when the reader stopped early (`... | head`)."""
    from personasim.simulation.runs.tools.replay import export_jsonl

    try:
        count = export_jsonl(store, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return None
    return count
