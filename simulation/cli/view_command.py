"""`personasim view RUN_DIR [RUN_DIR ...]`: the runs as one self-contained HTML page;
`personasim view DIR` of a sweep or a folder of runs: a run list page linking to each run's.

Opening a run never runs code it names (docs/security.md): a scenario file's summary lines need
`--scenario-file FILE`. Served, the page is on loopback, on a free port unless `--port` names
one, and answers only requests whose Host header names this machine (no DNS rebinding).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.cli.options import err, open_store, out, size

if TYPE_CHECKING:
    from personasim.simulation.runs.viewer.viewer_server import LocalServer

__all__ = ["add_scenario_file_argument", "add_view_command", "port_number"]

LOOPBACK = "127.0.0.1"


def add_view_command(commands: Any) -> None:
    view = commands.add_parser("view", help="inspect runs in a browser (one HTML file, offline)")
    view.add_argument(
        "run_dirs", type=Path, nargs="+", metavar="RUN_DIR", help="2+: compare; a sweep: run list"
    )
    view.add_argument("--output", type=Path, help="HTML file to write (default RUN_DIR/view.html)")
    view.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 instead")
    view.add_argument(
        "--port", type=port_number, default=0, help="with --serve (default 0: a free port)"
    )
    view.add_argument(
        "--host",
        default=LOOPBACK,
        help="with --serve: the address to bind (default 127.0.0.1: this machine only); requests "
        "must name it, 127.0.0.1, localhost or [::1] as their Host",
    )
    add_scenario_file_argument(view)
    view.set_defaults(handler=_view)


def add_scenario_file_argument(parser: Any) -> None:
    """`--scenario-file FILE`: the file a scenario-file run used, named by the user (a run
    directory never names code to run)."""
    parser.add_argument(
        "--scenario-file",
        type=Path,
        metavar="FILE",
        help="a run of a scenario file: that file (its sha256 must be the one the run recorded)",
    )


def port_number(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: any free one), got {text!r}")
    return port


def _view(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.viewer.viewer import collect_run, render_page, write_page
    from personasim.simulation.runs.viewer.viewer_list import is_run_folder
    from personasim.simulation.runs.viewer.viewer_server import ViewServer

    if len(args.run_dirs) == 1 and is_run_folder(args.run_dirs[0]):
        return _view_folder(args, args.run_dirs[0])
    runs = []
    for run_dir in args.run_dirs:
        with open_store(run_dir) as store:
            run = collect_run(
                run_dir, store, decisions=len(args.run_dirs) > 1, scenario_file=args.scenario_file
            )
        for note in run["notes"]:
            err.print(f"note: {run_dir}: {note}", markup=False)
        runs.append(run)
    if args.scenario_file is not None and not any(r["manifest"].get("scenario_file") for r in runs):
        raise RunError(
            f"--scenario-file {args.scenario_file}: no run given is a scenario file's run (an "
            "installed scenario is found by name); leave --scenario-file out"
        )
    html = render_page(runs)
    if args.serve:
        return _serve(lambda: ViewServer(html, args.port, args.host), args, f"{len(runs)} run(s)")
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
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.viewer.viewer_list import FolderServer, write_folder_pages

    if args.scenario_file is not None:
        raise RunError(
            f"--scenario-file: {base} is a folder of runs; view one run with its scenario file "
            "(personasim view RUN --scenario-file FILE)"
        )
    if args.serve:
        return _serve(lambda: FolderServer(base, args.port, args.host), args, f"the runs in {base}")
    target = args.output or base / "view.html"
    try:
        pages, problems = write_folder_pages(base, target)
    except OSError as exc:
        raise RunError(f"cannot write {target} ({exc.strerror}); choose another --output") from None
    for problem in problems:
        out.print(f"not opened: {problem}", markup=False)
    out.print(f"{target}: the run list, and {pages} run page(s) (RUN/view.html)", markup=False)
    return 0


def _serve(start: Callable[[], LocalServer], args: argparse.Namespace, what: str) -> int:
    """Serve until Ctrl-C; an address or port that cannot be had is one error line."""
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.viewer.viewer_server import is_loopback

    try:
        server = start()
    except (OSError, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        reason = f"cannot serve on {args.host} port {args.port} ({why})"
        raise RunError(f"{reason}; choose another --port (0: any free) or --host") from None
    if not is_loopback(args.host):
        err.print(
            f"warning: serving on {args.host}: anyone who can reach it can read these runs "
            "(prompts, replies, personas)",
            markup=False,
        )
    out.print(f"serving {what} at {server.url} (Ctrl-C stops)", markup=False)
    with server:
        server.serve_forever()
    return 0
