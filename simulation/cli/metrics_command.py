"""`personasim metrics RUN_DIR [--check]`: recompute metrics.json from the event log alone.

`--check` exits 0 when metrics.json and the log match what was recorded, 1 when either differs
or when there is no metrics.json yet (a run that did not finish; `metrics RUN_DIR` writes it).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.cli.options import open_store, out
from personasim.simulation.cli.view_command import add_scenario_file_argument

if TYPE_CHECKING:
    from personasim.simulation.log.sqlite_store import SQLiteEventStore

__all__ = ["add_metrics_command"]

AGAIN = "then run `personasim metrics` again"
"""What to do once a run that is still being written has ended."""


def add_metrics_command(commands: Any) -> None:
    metrics = commands.add_parser("metrics", help="recompute metrics.json from the log alone")
    metrics.add_argument("run_dir", type=Path)
    metrics.add_argument(
        "--check",
        action="store_true",
        help="only compare; exit 1 if different or if there is no metrics.json yet",
    )
    add_scenario_file_argument(metrics)
    metrics.set_defaults(handler=_metrics)


def _metrics(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.lifecycle.atomic_files import json_text
    from personasim.simulation.runs.lifecycle.run_lock import refuse_if_locked

    if not args.check:  # a live run's files are its writer's: said before the slow imports
        refuse_if_locked(args.run_dir, AGAIN)
    from personasim.simulation.runs.lifecycle.run_dir import (
        EVENTS_FILE,
        METRICS_FILE,
        compute_run_metrics,
        read_manifest,
        write_metrics,
        write_run_reports,
    )
    from personasim.simulation.runs.lifecycle.scenario_file import scenario_for_run

    scenario = scenario_for_run(read_manifest(args.run_dir), args.scenario_file)
    with open_store(args.run_dir) as store:
        metrics = compute_run_metrics(store, scenario)
        log_ok = _check_log_against_manifest(args.run_dir, store) if args.check else True
    path = args.run_dir / METRICS_FILE
    text = json_text(metrics)  # what write_metrics writes
    same = path.exists() and path.read_text() == text
    if args.check and not path.exists():
        out.print(
            f"{path}: no {METRICS_FILE} yet (the run did not finish, or the file was removed), "
            f"so nothing to compare; `personasim metrics {args.run_dir}` writes it from the log"
        )
        return 1
    if args.check:
        out.print(f"{path}: {'identical to' if same else 'DIFFERS from'} the recomputed metrics")
        return 0 if same and log_ok else 1
    with _writing(args.run_dir):
        write_metrics(args.run_dir, metrics)
        state = "unchanged" if same else "written"
        out.print(f"{path}: {state} (recomputed from {EVENTS_FILE}, no model call)")
        if metrics["partial"]:
            out.print("partial: the run did not complete, so these metrics cover only its events")
        for report in write_run_reports(args.run_dir, metrics, scenario):
            out.print(f"  {report}")
    return 0


@contextmanager
def _writing(run_dir: Path) -> Iterator[None]:
    """The run's writer lock, held while metrics.json and the reports are rewritten (each
    atomically), so a run or resume starting meanwhile is refused rather than mixed in."""
    from personasim.simulation.runs.lifecycle.run_lock import RunLock

    lock = RunLock(run_dir)
    lock.acquire(AGAIN)
    try:
        yield
    finally:
        lock.release()


def _check_log_against_manifest(run_dir: Path, store: SQLiteEventStore) -> bool:
    """The log's event count and hash against what the manifest recorded when the run last
    stopped or finished; False when they differ."""
    from personasim.simulation.runs.lifecycle.run_dir import EVENTS_FILE, read_manifest

    recorded = read_manifest(run_dir).get("log")
    path = run_dir / EVENTS_FILE
    if not recorded or recorded.get("events") is None:
        out.print(
            f"{path}: the manifest records no event count or hash (a run still running, or "
            "written by an older personasim); not compared"
        )
        return True
    count, sha256 = store.digest()
    if recorded == {"events": count, "sha256": sha256}:
        out.print(f"{path}: {count} events, identical to what the manifest recorded")
        return True
    out.print(
        f"{path}: DIFFERS from the manifest: it recorded {recorded['events']} events (sha256 "
        f"{recorded['sha256'][:12]}…), the log holds {count} (sha256 {sha256[:12]}…)"
    )
    return False
