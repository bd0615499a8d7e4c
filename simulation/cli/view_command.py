"""`personasim view RUN_DIR [RUN_DIR ...]`: the runs as one self-contained HTML page;
`personasim view DIR` of a sweep or a folder of runs: a run list page linking to each run's."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.cli.options import int_from, open_store, out, size

if TYPE_CHECKING:
    from personasim.simulation.runs.viewer import LocalServer

__all__ = ["add_view_command"]


def add_view_command(commands: Any) -> None:
    view = commands.add_parser("view", help="inspect runs in a browser (one HTML file, offline)")
    view.add_argument(
        "run_dirs", type=Path, nargs="+", metavar="RUN_DIR", help="2+: compare; a sweep: run list"
    )
    view.add_argument("--output", type=Path, help="HTML file to write (default RUN_DIR/view.html)")
    view.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 instead")
    view.add_argument("--port", type=int_from(0), default=8000, help="with --serve (0: any free)")
    view.set_defaults(handler=_view)


def _view(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.runner import RunError
    from personasim.simulation.runs.viewer import ViewServer, collect_run, render_page, write_page
    from personasim.simulation.runs.viewer_list import is_run_folder

    if len(args.run_dirs) == 1 and is_run_folder(args.run_dirs[0]):
        return _view_folder(args, args.run_dirs[0])
    runs = []
    for run_dir in args.run_dirs:
        with open_store(run_dir) as store:
            runs.append(collect_run(run_dir, store, decisions=len(args.run_dirs) > 1))
    html = render_page(runs)
    if args.serve:
        return _serve(lambda: ViewServer(html, args.port), args.port, f"{len(runs)} run(s)")
    target = args.output or args.run_dirs[0] / "view.html"
    try:
        write_page(html, target)
    except OSError as exc:
        raise RunError(f"cannot write {target} ({exc.strerror}); choose another --output") from None
    agents = sum(len(r["agents"]["rows"]) for r in runs)
    out.print(f"{target}: {size(target.stat().st_size)}, {agents} agents")
    return 0


def _view_folder(args: argparse.Namespace, base: Path) -> int:
    """The run list of a sweep or folder: served (each run's page built when opened), or
    written as DIR/view.html with each run's page beside its run."""
    from personasim.simulation.runs.runner import RunError
    from personasim.simulation.runs.viewer_list import FolderServer, write_folder_pages

    if args.serve:
        return _serve(lambda: FolderServer(base, args.port), args.port, f"the runs in {base}")
    target = args.output or base / "view.html"
    try:
        pages, problems = write_folder_pages(base, target)
    except OSError as exc:
        raise RunError(f"cannot write {target} ({exc.strerror}); choose another --output") from None
    for problem in problems:
        out.print(f"not opened: {problem}", markup=False)
    out.print(f"{target}: the run list, and {pages} run page(s) (RUN/view.html)", markup=False)
    return 0


def _serve(start: Callable[[], LocalServer], port: int, what: str) -> int:
    """Serve until Ctrl-C; a port that cannot be had is one error line."""
    from personasim.simulation.runs.runner import RunError

    try:
        server = start()
    except OSError as exc:
        reason = f"cannot serve on 127.0.0.1:{port} ({exc.strerror})"
        raise RunError(f"{reason}; choose another --port (0: any free)") from None
    out.print(f"serving {what} at {server.url} (Ctrl-C stops)", markup=False)
    with server:
        server.serve_forever()
    return 0
