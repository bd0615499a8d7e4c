"""`personasim runs [DIR]`: the run directories in DIR, newest first, as one table.

DIR may be a run, a sweep (one run per cell) or a folder of runs and sweeps; finding and
summarising the runs (manifests only: no code runs) is `runs.tools.run_list`, which the
viewer's run list shares.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import fail, out
from personasim.simulation.runs.tools.run_list import COLUMNS, MAX_DEPTH, RunRow, find_runs, run_row

__all__ = ["RunRow", "add_runs_command", "find_runs", "run_row"]

DEFAULT_DIR = Path("runs")
"""Where `run` and `sweep` put a run without --out (run_dir.create_run_dir)."""
NO_WRAP = ("status", "started")
"""Cells a narrow terminal does not fold (short, and read at a glance)."""


def add_runs_command(commands: Any) -> None:
    runs = commands.add_parser(
        "runs",
        help="list the runs in a folder (runs/ by default), newest first",
        description="List the run directories in DIR (a run, a sweep, or a folder of runs and "
        f"sweeps, searched {MAX_DEPTH} levels deep): path relative to DIR, status, scenario, "
        "model, size, validity and start time (UTC), newest first. Only manifests are read.",
    )
    runs.add_argument(
        "directory",
        nargs="?",
        type=Path,
        default=DEFAULT_DIR,
        metavar="DIR",
        help=f"where to look (default: {DEFAULT_DIR}/, where runs go without --out)",
    )
    runs.set_defaults(handler=_runs)


def _runs(args: argparse.Namespace, extra: Sequence[str]) -> int:
    directory: Path = args.directory
    if not directory.exists():
        return fail(f"{directory}: no such directory", 2)
    if not directory.is_dir():
        return fail(f"{directory}: not a directory", 2)
    rows = find_runs(directory)
    if not rows:
        out.print(f"no runs found in {directory}", markup=False)
        return 0
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True)
    for name in COLUMNS:
        table.add_column(name, overflow="fold", no_wrap=name in NO_WRAP)
    for row in rows:
        table.add_row(*row.cells(), style="red" if row.status == "damaged" else None)
    out.print(f"{len(rows)} run(s) in {directory}, newest first:", markup=False)
    # A terminal's width folds long cells; piped output keeps each run on one line (grep).
    wide = Console(file=out.file, width=10_000, highlight=False, emoji=False)
    (out if out.is_terminal else wide).print(table)
    return 0
